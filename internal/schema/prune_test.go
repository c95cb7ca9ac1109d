package schema

// Prune drops the fields Unknown reports from obj, in place, and returns
// their paths.
//
// It is for the tests: nothing in the module drops unknown fields in place
// (the function and the CLI report them, with Unknown). The tests use it to
// check that Unknown's paths are exactly the fields pruning drops.
func (s *Schema) Prune(obj map[string]any) []string {
	c := s.forKind(obj)
	if c == nil {
		return nil
	}
	return prune(obj, c)
}
