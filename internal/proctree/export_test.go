package proctree

// DescendantsListed and DescendantsByParent are Descendants by each of its
// two ways of finding a process's children.
func DescendantsListed(pid int) []int { return descendants(pid, listedChildren) }

func DescendantsByParent(pid int) []int { return descendants(pid, byParent()) }
