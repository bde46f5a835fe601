package workload

import "slices"

// singleGPUSets are the generator sets the single-GPU system runs, in the
// order AllNames lists them: the UVMMU experiments' nine (Names), the
// ISPASS-2009 benchmarks of the incomplete-pages paper and SUV Table I's.
// GRIT's workloads run on the multi-GPU system only (gritGenerators).
var singleGPUSets = []map[string]generator{generators, ispassGenerators, suvGenerators}

// generatorOf finds a workload generator the single-GPU system runs.
func generatorOf(name string) (generator, bool) {
	for _, set := range singleGPUSets {
		if g, ok := set[name]; ok {
			return g, true
		}
	}
	return nil, false
}

// AllNames lists every workload the single-GPU system runs: Names (the
// set of the UVMMU experiments and of --workloads all), then ISPASSNames
// and SUVNames.
func AllNames() []string { return slices.Concat(Names(), ISPASSNames(), SUVNames()) }
