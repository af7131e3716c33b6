package monitor

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"

	"github.com/nanhunt/nanhunt/internal/safeio"
)

// Options tune Read.
type Options struct {
	// Groups are the tensor-parallel groups, when the caller knows them
	// (for a TP size t: {0..t-1}, {t..2t-1}, …). They restrict the partner
	// comparison to the origin rank's group.
	Groups [][]int
	// Jobs is how many ranks are read at once; 0 means one per CPU.
	Jobs int
	// MaxWarningsPerFile caps the warnings listed per file (0: 20); the
	// rest are counted.
	MaxWarningsPerFile int
	// Ahead, when set, follows the max and min of every tensor row, step
	// after step, and keeps those it says warn before the NaN (Run.Climbs).
	Ahead AheadJudge
}

// Run is a monitor output folder that has been read.
type Run struct {
	// Root is the folder given to Read.
	Root    string
	Folders []Folder
	// Warnings are sorted by file and line.
	Warnings  []Warning
	FilesRead int
	RowsRead  int64
	BytesRead int64

	ranks    []*rankState
	styles   []string
	findings Findings
}

// Read reads the monitor output under dir (the monitor output folder, or
// one rank folder) and analyses it. Files are streamed: memory grows with
// the number of ranks and kinds, not with the rows (with Options.Ahead, a
// rank being read also keeps about 1 kB per row name, and a rank read
// keeps only the series that fired). Damaged lines and
// files become warnings; Read fails only when dir holds nothing readable,
// or with ctx's error when ctx is done before it finished: every file being
// read stops at its next read of the disk.
func Read(ctx context.Context, dir string, opt Options) (*Run, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	folders, warns, err := discover(dir)
	if err != nil {
		return nil, err
	}
	if opt.MaxWarningsPerFile <= 0 {
		opt.MaxWarningsPerFile = 20
	}
	jobs := opt.Jobs
	if jobs <= 0 {
		jobs = runtime.GOMAXPROCS(0)
	}
	r := &Run{Root: dir, Folders: folders, Warnings: warns}

	// Folders are sorted by rank, then time stamp: one worker per rank.
	var groups [][]Folder
	for i := 0; i < len(folders); {
		j := i
		for j < len(folders) && folders[j].Rank == folders[i].Rank {
			j++
		}
		groups = append(groups, folders[i:j])
		i = j
	}
	states := make([]*rankState, len(groups))
	var wg sync.WaitGroup
	sem := make(chan struct{}, jobs)
	for gi, g := range groups {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			rs := newRankState(g[0].Rank, opt.Ahead)
			for _, f := range g {
				for _, file := range f.Files {
					if ctx.Err() != nil {
						break
					}
					readFile(ctx, dir, file, rs, opt.MaxWarningsPerFile)
				}
			}
			rs.finishClimbs()
			states[gi] = rs
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}

	styles := map[string]bool{}
	for _, rs := range states {
		r.Warnings = append(r.Warnings, rs.warns...)
		r.FilesRead += rs.files
		r.RowsRead += rs.rows
		r.BytesRead += rs.bytes
		for s := range rs.styles {
			styles[s] = true
		}
	}
	for s := range styles {
		r.styles = append(r.styles, s)
	}
	sort.Strings(r.styles)
	sort.SliceStable(r.Warnings, func(i, j int) bool {
		a, b := r.Warnings[i], r.Warnings[j]
		if a.File != b.File {
			return a.File < b.File
		}
		return a.Line < b.Line
	})
	if r.FilesRead == 0 {
		return nil, fmt.Errorf("no readable monitor csv in %s%s", dir, why(r.Warnings))
	}
	r.ranks = states
	r.findings = analyze(ctx, r, opt)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return r, nil
}

// shownWhy is how many warnings the error of an unreadable folder lists.
const shownWhy = 3

// why lists the first warnings, for the error of a folder where no file
// could be read: "; actv_0-1.csv: cannot open: ...".
func why(ws []Warning) string {
	var b strings.Builder
	for i, w := range ws {
		if i == shownWhy {
			fmt.Fprintf(&b, "; and %d more", len(ws)-shownWhy)
			break
		}
		b.WriteString("; " + w.File)
		if w.Line > 0 {
			fmt.Fprintf(&b, ": line %d", w.Line)
		}
		b.WriteString(": " + w.Message)
	}
	return b.String()
}

// Findings returns the analysis made by Read.
func (r *Run) Findings() Findings { return r.findings }

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// readFile streams one CSV file into rs, until ctx is done.
func readFile(ctx context.Context, root string, file File, rs *rankState, maxWarn int) {
	fs := newFileSink(rs, file.Path, maxWarn)
	defer fs.close()
	fh, err := safeio.Open(filepath.Join(root, filepath.FromSlash(file.Path)))
	if err != nil {
		fs.warn(0, fmt.Sprintf("cannot open: %v", err))
		return
	}
	defer fh.Close()
	cr := &countingReader{r: safeio.CancelReader(ctx, fh)}
	sc := &scanner{kind: file.kind, classify: classify, sink: fs}
	if sc.scan(newRecordReader(cr, 256<<10)) {
		rs.files++
		rs.styles[sc.style] = true
	}
	rs.bytes += cr.n
}

// TPGroups returns the tensor-parallel groups of a job of world ranks with
// tensor-parallel size tp, numbered the usual way (consecutive ranks form
// a group): {0..tp-1}, {tp..2tp-1}, …. It returns nil when tp < 1.
func TPGroups(world, tp int) [][]int {
	if tp < 1 || world < 1 {
		return nil
	}
	var out [][]int
	for start := 0; start < world; start += tp {
		var g []int
		for r := start; r < min(start+tp, world); r++ {
			g = append(g, r)
		}
		out = append(out, g)
	}
	return out
}
