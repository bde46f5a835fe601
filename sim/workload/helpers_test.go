package workload

import (
	"encoding/binary"
	"hash/fnv"
	"testing"

	"github.com/stretchr/testify/require"
)

// collect drains warp w of block b of k.
func collect(k *Kernel, b, w int) []Op {
	var ops []Op
	s := k.NewWarp(b, w)
	var op Op
	for s.Next(&op) {
		ops = append(ops, op)
	}
	return ops
}

// kernels returns the kernel phases of wl in order.
func kernels(wl Workload) []*Kernel {
	var ks []*Kernel
	for _, ph := range wl.Phases() {
		if ph.Kernel != nil {
			ks = append(ks, ph.Kernel)
		}
	}
	return ks
}

// mustNew builds a workload or fails the test.
func mustNew(t testing.TB, name string, p Params) Workload {
	t.Helper()
	wl, err := New(name, p)
	require.NoError(t, err)
	return wl
}

// allocByName returns the named allocation.
func allocByName(t testing.TB, wl Workload, name string) Alloc {
	t.Helper()
	for _, a := range wl.Allocs() {
		if a.Name == name {
			return a
		}
	}
	require.Failf(t, "no allocation", "%s has no allocation %q", wl.Name(), name)
	return Alloc{}
}

// lanes returns the active addresses of op.
func lanes(op Op) []uint64 { return append([]uint64(nil), op.Addr[:op.Lanes]...) }

// streamHash hashes the op streams of the first warps of every kernel plus
// a spread of warps across the grid.
func streamHash(wl Workload, prefix int) uint64 {
	h := fnv.New64a()
	var buf [8]byte
	put := func(v uint64) {
		binary.LittleEndian.PutUint64(buf[:], v)
		h.Write(buf[:])
	}
	var op Op
	for _, k := range kernels(wl) {
		wpb := k.WarpsPerBlock()
		total := k.Blocks * wpb
		for i := 0; i < total; i++ {
			if i >= prefix && i%(total/prefix+1) != 0 {
				continue
			}
			s := k.NewWarp(i/wpb, i%wpb)
			for s.Next(&op) {
				put(uint64(op.Kind)<<48 | uint64(op.Size)<<40 | uint64(op.Lanes)<<32 | uint64(op.Cycles))
				for _, a := range op.Addr[:op.Lanes] {
					put(a)
				}
			}
		}
	}
	return h.Sum64()
}
