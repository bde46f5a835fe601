package gen

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPACachePortsMatchSpec pins grit_pa_cache's header to SPEC 8.3: the
// parameter names and defaults, and every port's name, direction and
// declared range, in order, with CNT_W and RESP_W following THRESHOLD.
func TestPACachePortsMatchSpec(t *testing.T) {
	e, err := Lookup("grit_pa_cache")
	require.NoError(t, err)
	assert.Equal(t, Values{"SETS": 16, "WAYS": 4, "VPN_BITS": 36, "THRESHOLD": 4}, e.Defaults())
	text, err := e.Text(nil)
	require.NoError(t, err)
	want := `module grit_pa_cache #(
  parameter SETS = 16,
  parameter WAYS = 4,
  parameter VPN_BITS = 36,
  parameter THRESHOLD = 4
) (
  input  wire clk,
  input  wire rst,
  input  wire req_valid,
  output wire req_ready,
  input  wire [VPN_BITS-1:0] req_vpn,
  input  wire req_write,
  output wire resp_valid,
  output wire resp_trigger,
  output wire resp_write,
  output wire [$clog2(THRESHOLD + 1)-1:0] resp_count,
  output wire tbl_req_valid,
  input  wire tbl_req_ready,
  output wire [1:0] tbl_req_op,
  output wire [VPN_BITS-1:0] tbl_req_vpn,
  output wire tbl_req_rw,
  output wire [(THRESHOLD > 1 ? $clog2(THRESHOLD) : 1)-1:0] tbl_req_count,
  input  wire tbl_resp_valid,
  input  wire tbl_resp_found,
  input  wire tbl_resp_rw,
  input  wire [(THRESHOLD > 1 ? $clog2(THRESHOLD) : 1)-1:0] tbl_resp_count
);`
	assert.Contains(t, string(text), want)
	assert.NotContains(t, string(text), "always @(*)", "no combinational always blocks, so no latches")
	for threshold, widths := range map[uint64][2]int{1: {1, 1}, 2: {1, 2}, 4: {2, 3}, 8: {3, 4}, 16: {4, 5}} {
		v, err := e.Check(Values{"THRESHOLD": threshold})
		require.NoError(t, err)
		for _, p := range e.Ports {
			switch p.Name {
			case "tbl_req_count", "tbl_resp_count":
				assert.Equal(t, widths[0], p.BitsAt(v), "CNT_W at THRESHOLD %d", threshold)
			case "resp_count":
				assert.Equal(t, widths[1], p.BitsAt(v), "RESP_W at THRESHOLD %d", threshold)
			}
		}
	}
}

func TestPACacheParameterErrors(t *testing.T) {
	e, err := Lookup("grit_pa_cache")
	require.NoError(t, err)
	for _, tc := range []struct {
		values Values
		want   string
	}{
		{Values{"THRESHOLD": 17}, "grit_pa_cache parameter THRESHOLD = 17 is outside the allowed range 1..16"},
		{Values{"WAYS": 1}, "grit_pa_cache parameter WAYS = 1 is outside the allowed range 2..16"},
		{Values{"SETS": 12}, "grit_pa_cache (SETS=12 WAYS=4 VPN_BITS=36 THRESHOLD=4): pacache: Sets = 12 must be a power of two"},
		{Values{"SETS": 64, "VPN_BITS": 6}, "pacache: VPNBits = 6 is outside 7..52"},
	} {
		_, err := e.Text(tc.values)
		require.Error(t, err)
		assert.True(t, strings.Contains(err.Error(), tc.want), "%v: %v", tc.values, err)
	}
}
