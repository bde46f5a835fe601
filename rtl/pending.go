package rtl

// Scheduled calls visit for every block asleep until a set cycle after
// the current one: a block whose next step is already scheduled (a
// latency, a transfer, a compute delay) rather than waiting on an input.
func (s *Sim) Scheduled(visit func(path string, at uint64)) {
	for _, b := range s.blocks {
		if b.asleep && b.wakeAt != Never && b.wakeAt > s.cycle {
			visit(b.path, b.wakeAt)
		}
	}
}
