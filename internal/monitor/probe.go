package monitor

import (
	"context"
	"path/filepath"
	"sync"

	"github.com/nanhunt/nanhunt/internal/safeio"
)

// probe asks, after the first pass, how every rank recorded one tensor at
// one step: the partner comparison and the ranks of a gradient need rows
// whose name is only known once the first pass is over.
type probe struct {
	kind     kind
	step     int
	module   string
	tensor   string
	micro    int
	vpp      int
	anyMicro bool
	weakMode bool // count weak rows as anomalous
	hits     map[int]probeHit
}

// probeHit is how one rank recorded the probed tensor.
type probeHit struct {
	seen      bool
	anomalous bool
	kind      string
}

func (p *probe) matches(t *tensorRow) bool {
	return t.kind == p.kind && t.step == p.step && t.vpp == p.vpp &&
		(p.anyMicro || t.micro == p.micro) &&
		string(t.module) == p.module && string(t.tensor) == p.tensor
}

// v2Kinds are the kinds a monitor_v2 file can hold.
var v2Kinds = map[string][]kind{
	"module":      {kActv, kActvGrad},
	"weight_grad": {kGradUnreduced, kGradReduced},
	"optimizer":   {kExpAvg, kExpAvgSq},
	"param":       {kParamOrigin, kParamUpdated},
}

func (f File) holds(k kind) bool {
	if f.kind == kModuleV2 {
		for _, x := range v2Kinds[f.Kind] {
			if x == k {
				return true
			}
		}
		return false
	}
	return f.kind == k
}

// probeSink records the hits of one rank.
type probeSink struct {
	rank   int
	probes []*probe
	hits   []probeHit
}

func (s *probeSink) record()          {}
func (s *probeSink) warn(int, string) {}

func (s *probeSink) row(t *tensorRow) {
	if t.an.skip {
		return
	}
	for i, p := range s.probes {
		if !p.matches(t) {
			continue
		}
		h := &s.hits[i]
		h.seen = true
		if t.an.kind != anNone && (p.weakMode || !t.an.weak) && !h.anomalous {
			h.anomalous = true
			h.kind = t.an.kind.String()
		}
	}
}

// runProbes rereads the files that hold the probed steps, until ctx is
// done.
func runProbes(ctx context.Context, r *Run, probes []*probe, jobs int) {
	if len(probes) == 0 {
		return
	}
	for _, p := range probes {
		p.hits = map[int]probeHit{}
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, max(jobs, 1))
	for i := 0; i < len(r.Folders); {
		j := i
		for j < len(r.Folders) && r.Folders[j].Rank == r.Folders[i].Rank {
			j++
		}
		g := r.Folders[i:j]
		i = j
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			ps := &probeSink{rank: g[0].Rank, probes: probes, hits: make([]probeHit, len(probes))}
			for _, f := range g {
				for _, file := range f.Files {
					want := false
					for _, p := range probes {
						want = want || (file.holds(p.kind) && file.contains(p.step))
					}
					if !want || ctx.Err() != nil {
						continue
					}
					fh, err := safeio.Open(filepath.Join(r.Root, filepath.FromSlash(file.Path)))
					if err != nil {
						continue
					}
					sc := &scanner{kind: file.kind, classify: classify, sink: ps}
					sc.scan(newRecordReader(safeio.CancelReader(ctx, fh), 256<<10))
					fh.Close()
				}
			}
			mu.Lock()
			for i, p := range probes {
				if ps.hits[i].seen {
					p.hits[ps.rank] = ps.hits[i]
				}
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
}
