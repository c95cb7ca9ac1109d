package v1alpha2

import "sort"

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// SortedKeys returns the keys of m in order, so that every list built from a
// map renders the same way each time.
func SortedKeys[V any](m map[string]V) []string { return sortedKeys(m) }
