package rtl_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/uvmmu/uvmmu/rtl"
)

func TestEvalVerilogConstantExpressions(t *testing.T) {
	v := rtl.Params{"NFG": 1000, "DEPTH": 64, "W": 256}
	for expr, want := range map[string]uint64{
		"":                           0,
		"64":                         64,
		"DEPTH":                      64,
		"$clog2(DEPTH+1)":            7,
		"$clog2(DEPTH)":              6,
		"$clog2(1)":                  0,
		"((NFG + 31) / 32)":          32,
		"(NFG + 31) / 32 > 1 ? 5:1":  5,
		"NFG > 2000 ? 1 : 2 + 3 * 2": 8,
		"1 << 3 + 1":                 16,
		"W < (1 << 5) ? W : 1 << 5":  32,
		"DEPTH == 64 && NFG != 1000": 0,
		"DEPTH >= 64 || NFG <= 1":    1,
		"NFG % 32":                   8,
		"$clog2(NFG + 2) - 1":        9,
	} {
		if expr == "" {
			continue
		}
		got, err := rtl.Eval(expr, v)
		require.NoError(t, err, expr)
		require.Equal(t, want, got, expr)
	}
	for _, bad := range []string{"FOO", "1 +", "(2", "1 / 0", "1 ? 2", "3 $"} {
		_, err := rtl.Eval(bad, v)
		require.Error(t, err, bad)
	}
}

func TestModuleMakesDeclaredWiresAndRegisters(t *testing.T) {
	m := &rtl.Module{
		Name:   "m",
		Locals: []rtl.Local{{Name: "PW", Expr: "$clog2(DEPTH)"}},
		Ports:  []rtl.PortDecl{{Name: "en", Dir: rtl.In}, {Name: "ptr", Dir: rtl.Out, Width: "PW"}},
		Regs:   []rtl.RegDecl{{Name: "ptr_q", Width: "PW", Reset: "DEPTH - 1"}, {Name: "on_q", Reset: "1"}, {Name: "mem", Width: "8", Depth: "DEPTH"}},
	}
	s := rtl.New(rtl.Options{})
	e := m.At(rtl.Params{"DEPTH": 12})
	require.Equal(t, uint64(4), e.Value("PW"))
	en := rtl.PortBit(s, "m", e, "en")
	ptr := rtl.PortWire[uint8](s, "m", e, "ptr")
	require.Equal(t, "m.ptr", ptr.Name())
	require.Equal(t, 4, ptr.Width())
	b := &blk{}
	s.Add(b, "m")
	b.ptr = rtl.DeclReg[uint8](&b.Base, e, "ptr_q")
	require.Equal(t, uint8(11), b.ptr.Q())
	require.Error(t, e.Check(s, "m"), "on_q and mem are missing")
	b.on = rtl.DeclFlag(&b.Base, e, "on_q")
	require.True(t, b.on.Q())
	mem := rtl.DeclVec[uint8](&b.Base, e, "mem")
	require.Equal(t, 12, mem.Len())
	require.NoError(t, e.Check(s, "m"))
	rtl.NewReg[uint8](&b.Base, "extra", 3, 0)
	require.ErrorContains(t, e.Check(s, "m"), "Go register extra is not declared")
	_ = en
}

type blk struct {
	rtl.Base
	ptr *rtl.Reg[uint8]
	on  *rtl.Reg[bool]
}

func (*blk) Drive() {}
func (*blk) Eval()  {}
