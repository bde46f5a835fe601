package workload

import (
	"bufio"
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// graph is a directed graph in the Rodinia bfs layout: node i's edges are
// dest[start[i] : start[i]+degree[i]]. A generated graph keeps the same
// layout implicitly, in gen, and leaves the three lists empty.
type graph struct {
	start  []uint32
	degree []uint32
	dest   []uint32
	gen    *generatedGraph
}

func (g *graph) nodes() int {
	if g.gen != nil {
		return g.gen.n
	}
	return len(g.start)
}

func (g *graph) edges() int {
	if g.gen != nil {
		return 2 * int(g.gen.pairs)
	}
	return len(g.dest)
}

// Rodinia graph limits: node and edge ids are C ints in the benchmark;
// edge costs are never negative (graphgen draws them in [1, 10]).
const (
	maxGraphCount = math.MaxInt32
	// graphMaxLine bounds a line of the file: a record is two integers.
	graphMaxLine = 4096
	// graphQuoteMax bounds how much of a bad token an error quotes.
	graphQuoteMax = 40
)

// LargestScale is the largest Params.Scale the built-in workload name
// accepts: MaxScale, or less where its benchmark indexes the generated
// graph with C ints (bfs's edge ids, sssp's edgeArray; checkGraphIndices).
func LargestScale(name string) float64 {
	switch name {
	case "bfs":
		return float64(maxGraphCount / bfsEdges)
	case "sssp":
		return float64(maxGraphCount / (ssspVertices * ssspNeighbours))
	}
	return MaxScale
}

// checkGraphIndices fails when a generated graph has more than
// maxGraphCount of what its benchmark indexes with a C int (bfs's edge
// ids, sssp's edgeArray), count at the given scale and perScale at scale 1,
// naming the largest whole scale that fits.
func checkGraphIndices(name, what string, count, perScale int, scale float64) error {
	if count <= maxGraphCount {
		return nil
	}
	return fmt.Errorf("workload %s: Params.Scale = %v makes %d %s, more than the benchmark's C int indices allow (%d); Params.Scale = %d fits",
		name, scale, count, what, maxGraphCount, maxGraphCount/perScale)
}

// graphTokens reads a Rodinia graph file's whitespace-separated integers
// and knows the line each one is on.
type graphTokens struct {
	sc     *bufio.Scanner
	line   int
	fields []string
}

// next returns the next token and its line, or "" at the end of the file.
func (t *graphTokens) next() (string, error) {
	for len(t.fields) == 0 {
		if !t.sc.Scan() {
			if err := t.sc.Err(); err != nil {
				if errors.Is(err, bufio.ErrTooLong) {
					return "", fmt.Errorf("rodinia graph line %d: longer than %d bytes; expected two integers per line", t.line+1, graphMaxLine)
				}
				return "", err
			}
			return "", nil
		}
		t.line++
		t.fields = strings.Fields(t.sc.Text())
	}
	tok := t.fields[0]
	t.fields = t.fields[1:]
	return tok, nil
}

// quoteToken quotes a token for an error in printable ASCII, cut to
// graphQuoteMax bytes: a binary file never reaches the terminal raw.
func quoteToken(tok string) string {
	if len(tok) > graphQuoteMax {
		return fmt.Sprintf("%+q... (%d bytes)", tok[:graphQuoteMax], len(tok))
	}
	return fmt.Sprintf("%+q", tok)
}

// readRodiniaGraph parses the Rodinia bfs text format: the node count, then
// "start degree" per node, then the source node, then the edge count, then
// "dest cost" per edge, all whitespace-separated integers. Errors name the
// line. Costs must not be negative and no two nodes' edge ranges
// [start, start+degree) may overlap.
func readRodiniaGraph(r io.Reader) (*graph, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 256), graphMaxLine)
	t := &graphTokens{sc: sc}
	// next reads one integer in [lo, hi]; what and item (item < 0: none)
	// name it in errors.
	next := func(what string, item, lo, hi int64) (int64, error) {
		name := func() string {
			if item < 0 {
				return what
			}
			return fmt.Sprintf("%s %d", what, item)
		}
		tok, err := t.next()
		if err != nil {
			return 0, err
		}
		if tok == "" {
			return 0, fmt.Errorf("rodinia graph line %d: unexpected end of file, expected %s", t.line, name())
		}
		v, err := strconv.ParseInt(tok, 10, 64)
		if err != nil || v < lo || v > hi {
			return 0, fmt.Errorf("rodinia graph line %d: %s must be an integer in [%d, %d], got %s", t.line, name(), lo, hi, quoteToken(tok))
		}
		return v, nil
	}
	n, err := next("node count", -1, 1, maxGraphCount)
	if err != nil {
		return nil, err
	}
	g := &graph{}
	var lines []int32 // the line of every node's record
	for i := int64(0); i < n; i++ {
		s, err := next("start of node", i, 0, maxGraphCount)
		if err != nil {
			return nil, err
		}
		d, err := next("degree of node", i, 0, maxGraphCount)
		if err != nil {
			return nil, err
		}
		g.start = append(g.start, uint32(s))
		g.degree = append(g.degree, uint32(d))
		lines = append(lines, int32(t.line))
	}
	if _, err := next("source node", -1, 0, n-1); err != nil {
		return nil, err
	}
	e, err := next("edge count", -1, 0, maxGraphCount)
	if err != nil {
		return nil, err
	}
	edgeCountLine := t.line
	for i := int64(0); i < e; i++ {
		d, err := next("destination of edge", i, 0, n-1)
		if err != nil {
			return nil, err
		}
		if _, err := next("cost of edge", i, 0, math.MaxInt32); err != nil {
			return nil, err
		}
		g.dest = append(g.dest, uint32(d))
	}
	if tok, err := t.next(); err != nil {
		return nil, err
	} else if tok != "" {
		return nil, fmt.Errorf("rodinia graph line %d: unexpected token %s after the %d edges", t.line, quoteToken(tok), e)
	}
	for i := range g.start {
		if end := uint64(g.start[i]) + uint64(g.degree[i]); end > uint64(e) {
			return nil, fmt.Errorf("rodinia graph line %d: node %d: start %d + degree %d exceeds the edge count %d (line %d)", lines[i], i, g.start[i], g.degree[i], e, edgeCountLine)
		}
	}
	if err := checkEdgeRanges(g, lines); err != nil {
		return nil, err
	}
	return g, nil
}

// checkEdgeRanges fails when two nodes' edge ranges overlap, naming both
// nodes and the line of the later one in the file.
func checkEdgeRanges(g *graph, lines []int32) error {
	order := make([]int32, 0, len(g.start))
	for i, d := range g.degree {
		if d > 0 {
			order = append(order, int32(i))
		}
	}
	slices.SortFunc(order, func(a, b int32) int { return cmp.Compare(g.start[a], g.start[b]) })
	for k := 1; k < len(order); k++ {
		a, b := order[k-1], order[k]
		if end := g.start[a] + g.degree[a]; g.start[b] < end {
			first, second := min(a, b), max(a, b)
			return fmt.Errorf("rodinia graph line %d: node %d's edges [%d, %d) overlap node %d's [%d, %d) (line %d)",
				lines[second], second, g.start[second], g.start[second]+g.degree[second],
				first, g.start[first], g.start[first]+g.degree[first], lines[first])
		}
	}
	return nil
}

// nodeLevels is every node's BFS level, -1 if unreachable: one byte per
// node while the depth stays under narrowUnreached (a generated graph's is
// logarithmic in its size: 11 at 261,444 nodes), four bytes otherwise.
type nodeLevels struct {
	narrow []uint8
	wide   []int32
}

// narrowUnreached marks an unreachable node in nodeLevels.narrow; a level
// must stay below it.
const narrowUnreached = math.MaxUint8

func (l *nodeLevels) len() int {
	if l.narrow != nil {
		return len(l.narrow)
	}
	return len(l.wide)
}

// at is node v's level, -1 if unreachable.
func (l *nodeLevels) at(v uint32) int32 {
	if l.narrow != nil {
		if b := l.narrow[v]; b != narrowUnreached {
			return int32(b)
		}
		return -1
	}
	return l.wide[v]
}

// bfsLevels runs breadth-first search from node 0 and returns every node's
// level and the deepest level. Levels do not depend on the order a level's
// nodes are expanded in, so each level is expanded in node order, which
// reads the edge lists front to back.
func bfsLevels(g *graph) (nodeLevels, int) {
	if level, depth, ok := narrowBFSLevels(g); ok {
		return nodeLevels{narrow: level}, depth
	}
	level, depth := wideBFSLevels(g)
	return nodeLevels{wide: level}, depth
}

// narrowBFSLevels finds the levels in one byte per node and nothing else:
// level k's nodes are found by scanning the levels, at most
// narrowUnreached scans of one byte per node. It fails at a depth of
// narrowUnreached.
func narrowBFSLevels(g *graph) ([]uint8, int, bool) {
	level := make([]uint8, g.nodes())
	for i := range level {
		level[i] = narrowUnreached
	}
	level[0] = 0
	for k := uint8(0); ; k++ {
		if g.gen != nil {
			found, ok := g.gen.expandLevel(level, k)
			if !ok {
				return nil, 0, false
			}
			if !found {
				return level, int(k), true
			}
			continue
		}
		found := false
		for u, l := range level {
			if l != k {
				continue
			}
			c := g.cursor(u)
			for j := uint32(0); j < c.degree; j++ {
				if v := g.destOf(&c, j); level[v] == narrowUnreached {
					if k+1 == narrowUnreached {
						return nil, 0, false
					}
					level[v] = k + 1
					found = true
				}
			}
		}
		if !found {
			return level, int(k), true
		}
	}
}

// wideBFSLevels finds the levels of a graph of any depth: the levels follow
// one another in a single queue of at most one entry per node.
func wideBFSLevels(g *graph) ([]int32, int) {
	level := make([]int32, g.nodes())
	for i := range level {
		level[i] = -1
	}
	level[0] = 0
	queue := make([]uint32, 1, g.nodes())
	depth := 0
	for head := 0; head < len(queue); depth++ {
		frontier := queue[head:]
		slices.Sort(frontier)
		head = len(queue)
		for _, u := range frontier {
			c := g.cursor(int(u))
			for j := uint32(0); j < c.degree; j++ {
				v := g.destOf(&c, j)
				if level[v] < 0 {
					level[v] = level[u] + 1
					queue = append(queue, v)
				}
			}
		}
	}
	return level, depth - 1
}
