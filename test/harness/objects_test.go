package harness

import "testing"

func TestDecodeObjects(t *testing.T) {
	objs, err := DecodeObjects([]byte("# comment\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\n---\napiVersion: v1\nkind: Secret\nmetadata: {name: b}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 2 || objs[0].GetName() != "a" || objs[1].GetKind() != "Secret" {
		t.Errorf("got %d objects: %v", len(objs), objs)
	}
}
