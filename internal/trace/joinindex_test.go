package trace

import (
	"maps"
	"testing"
)

// The index of a join's records gives back every place it was given, a
// record made with details standing for one made without, whatever the
// order; records that follow each other in one summary share a run.
func TestRecIndexPlaces(t *testing.T) {
	type add struct {
		rank int
		p    recPlace
	}
	far := denseRanks + 5
	cases := []struct {
		name string
		adds []add
		want map[int]recPlace
		runs int
	}{
		{"a node's step is one run", []add{
			{0, recPlace{offset: 100, size: 10, file: 1}},
			{1, recPlace{offset: 110, size: 20, file: 1}},
			{2, recPlace{offset: 130, size: 5, file: 1}},
		}, map[int]recPlace{
			0: {offset: 100, size: 10, file: 1},
			1: {offset: 110, size: 20, file: 1},
			2: {offset: 130, size: 5, file: 1},
		}, 1},
		{"a gap, another file or a rank past the dense bits", []add{
			{3, recPlace{offset: 0, size: 10, file: 0}},
			{4, recPlace{offset: 11, size: 10, file: 0}},
			{5, recPlace{offset: 21, size: 10, file: 2}},
			{far, recPlace{offset: 31, size: 7, file: 2}},
		}, map[int]recPlace{
			3:   {offset: 0, size: 10, file: 0},
			4:   {offset: 11, size: 10, file: 0},
			5:   {offset: 21, size: 10, file: 2},
			far: {offset: 31, size: 7, file: 2},
		}, 3},
		{"details stand for the first phase", []add{
			{7, recPlace{offset: 0, size: 10, file: 0}},
			{8, recPlace{offset: 10, size: 10, file: 0}},
			{7, recPlace{offset: 50, size: 30, file: 1, detailed: true}},
		}, map[int]recPlace{
			7: {offset: 50, size: 30, file: 1, detailed: true},
			8: {offset: 10, size: 10, file: 0},
		}, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ix := recIndex{}
			for _, a := range c.adds {
				ix.add(recordKey{"graph", 3, a.rank}, a.p)
			}
			sk := stepKey{"graph", 3}
			if got := ix.places(sk); !maps.Equal(got, c.want) {
				t.Errorf("places %v, want %v", got, c.want)
			}
			if n := len(ix[sk].runs); n != c.runs {
				t.Errorf("%d runs, want %d", n, c.runs)
			}
			for rank, p := range c.want {
				held, detailed := ix.holds(recordKey{"graph", 3, rank})
				if !held || detailed != p.detailed {
					t.Errorf("rank %d: held %v detailed %v, want held, detailed %v", rank, held, detailed, p.detailed)
				}
				if f := ix.fileOf(recordKey{"graph", 3, rank}, p.detailed); f != p.file {
					t.Errorf("rank %d: file %d, want %d", rank, f, p.file)
				}
			}
			for _, k := range []recordKey{{"graph", 3, 6}, {"graph", 4, 3}, {"", 3, 3}, {"graph", 3, far + 1}} {
				if held, _ := ix.holds(k); held {
					t.Errorf("%v: held, never added", k)
				}
			}
			if f := ix.fileOf(recordKey{"graph", 3, 6}, false); f != -1 {
				t.Errorf("a rank never added: file %d", f)
			}
		})
	}
}
