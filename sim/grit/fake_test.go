package grit

import "github.com/uvmmu/uvmmu/blocks/pte"

// fakeTables is a PageTables over maps: the host PTEs of the allocated
// pages and the GPUs' scheme bits.
type fakeTables struct {
	host map[uint64]pte.PTE
	gpu  map[[2]uint64]pte.Scheme
}

// newFakeTables allocates pages first..first+n-1 with host PTEs mapping
// frame 0x100+vpn remotely (bits GRIT must leave alone).
func newFakeTables(first, n uint64) *fakeTables {
	f := &fakeTables{host: map[uint64]pte.PTE{}, gpu: map[[2]uint64]pte.Scheme{}}
	for v := first; v < first+n; v++ {
		f.host[v] = pte.Remote(0x100 + v)
	}
	return f
}

func (f *fakeTables) HostPTE(vpn uint64) (pte.PTE, bool) {
	p, ok := f.host[vpn]
	return p, ok
}

func (f *fakeTables) SetHostPTE(vpn uint64, p pte.PTE) { f.host[vpn] = p }

func (f *fakeTables) GPUScheme(gpu int, vpn uint64) pte.Scheme {
	return f.gpu[[2]uint64{uint64(gpu), vpn}]
}

func (f *fakeTables) SetGPUScheme(gpu int, vpn uint64, s pte.Scheme) {
	f.gpu[[2]uint64{uint64(gpu), vpn}] = s
}

// setScheme gives pages vpn..vpn+n-1 scheme s.
func (f *fakeTables) setScheme(vpn, n uint64, s pte.Scheme) {
	for v := vpn; v < vpn+n; v++ {
		f.host[v] = f.host[v].WithScheme(s)
	}
}

// groups lists the group codes of the pages that have one, by base page.
func (f *fakeTables) groups(first, n uint64) map[uint64]pte.Group {
	g := map[uint64]pte.Group{}
	for v := first; v < first+n; v++ {
		if c := f.host[v].Group(); c != pte.Group1 {
			g[v] = c
		}
	}
	return g
}
