package workload

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
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

// Rodinia graph limits: node and edge ids are C ints in the benchmark.
const maxGraphCount = math.MaxInt32

// readRodiniaGraph parses the Rodinia bfs text format: the node count, then
// "start degree" per node, then the source node, then the edge count, then
// "dest cost" per edge, all whitespace-separated integers.
func readRodiniaGraph(r io.Reader) (*graph, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64), 64)
	sc.Split(bufio.ScanWords)
	count := 0
	// next reads one integer in [lo, hi]; what and item (item < 0: none)
	// name it in errors.
	next := func(what string, item, lo, hi int64) (int64, error) {
		count++
		name := func() string {
			if item < 0 {
				return what
			}
			return fmt.Sprintf("%s %d", what, item)
		}
		if !sc.Scan() {
			if err := sc.Err(); err != nil {
				return 0, fmt.Errorf("rodinia graph: token %d (%s): %w", count, name(), err)
			}
			return 0, fmt.Errorf("rodinia graph: unexpected end of file, expected %s (token %d)", name(), count)
		}
		v, err := strconv.ParseInt(sc.Text(), 10, 64)
		if err != nil || v < lo || v > hi {
			return 0, fmt.Errorf("rodinia graph: token %d: %s must be an integer in [%d, %d], got %q", count, name(), lo, hi, sc.Text())
		}
		return v, nil
	}
	n, err := next("node count", -1, 1, maxGraphCount)
	if err != nil {
		return nil, err
	}
	g := &graph{}
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
	}
	if _, err := next("source node", -1, 0, n-1); err != nil {
		return nil, err
	}
	e, err := next("edge count", -1, 0, maxGraphCount)
	if err != nil {
		return nil, err
	}
	for i := int64(0); i < e; i++ {
		d, err := next("destination of edge", i, 0, n-1)
		if err != nil {
			return nil, err
		}
		if _, err := next("cost of edge", i, math.MinInt32, math.MaxInt32); err != nil {
			return nil, err
		}
		g.dest = append(g.dest, uint32(d))
	}
	for i := range g.start {
		if end := uint64(g.start[i]) + uint64(g.degree[i]); end > uint64(e) {
			return nil, fmt.Errorf("rodinia graph: node %d: start %d + degree %d exceeds edge count %d", i, g.start[i], g.degree[i], e)
		}
	}
	if sc.Scan() {
		return nil, fmt.Errorf("rodinia graph: unexpected token %q after the %d edges", sc.Text(), e)
	}
	return g, nil
}

// bfsLevels runs breadth-first search from node 0 and returns every node's
// level (-1 if unreachable) and the deepest level. Levels do not depend on
// the order a level's nodes are expanded in, so each level is expanded in
// node order, which reads the edge lists front to back. The levels follow
// one another in a single queue of at most one entry per node.
func bfsLevels(g *graph) ([]int32, int) {
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
