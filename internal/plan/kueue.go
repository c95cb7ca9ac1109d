package plan

// LabelKueueQueueName is the label Kueue (kueue.x-k8s.io) reads a Job's
// LocalQueue from: a Job that carries it is created suspended by Kueue's
// webhook and runs once Kueue admits all of its pods together.
const LabelKueueQueueName = "kueue.x-k8s.io/queue-name"
