package uvm

// none marks the end of a chain.
const none = -1

// links are the prev/next index arrays of intrusive doubly-linked lists
// over nodes 0..n-1: every list operation is O(1) and allocates nothing.
// A node belongs to at most one chain at a time.
type links struct {
	prev, next []int32
	in         []bool
}

// chain is one list threaded through links: least recent at head.
type chain struct{ head, tail int32 }

func newLinks(n int) links {
	return links{prev: make([]int32, n), next: make([]int32, n), in: make([]bool, n)}
}

func emptyChain() chain { return chain{head: none, tail: none} }

func (l *links) pushBack(c *chain, i int32) {
	l.prev[i], l.next[i], l.in[i] = c.tail, none, true
	if c.tail == none {
		c.head = i
	} else {
		l.next[c.tail] = i
	}
	c.tail = i
}

func (l *links) remove(c *chain, i int32) {
	p, n := l.prev[i], l.next[i]
	if p == none {
		c.head = n
	} else {
		l.next[p] = n
	}
	if n == none {
		c.tail = p
	} else {
		l.prev[n] = p
	}
	l.in[i] = false
}

// touch makes i the most recent node of c, inserting it if absent.
func (l *links) touch(c *chain, i int32) {
	if l.in[i] {
		if c.tail == i {
			return
		}
		l.remove(c, i)
	}
	l.pushBack(c, i)
}
