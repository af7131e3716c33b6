package trace

import (
	"bufio"
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"unique"

	jsonv2 "github.com/go-json-experiment/json"
	jsonv1 "github.com/go-json-experiment/json/v1"

	"github.com/nanhunt/nanhunt/internal/fsjson"
	"github.com/nanhunt/nanhunt/internal/notation"
	"github.com/nanhunt/nanhunt/internal/safeio"

	"github.com/nanhunt/nanhunt/dump"
	"github.com/nanhunt/nanhunt/internal/dumplayout"
	"github.com/nanhunt/nanhunt/internal/policy"
	"github.com/nanhunt/nanhunt/verdict"
)

// maxSummaryLine bounds one line of a summary: a record is bounded by the
// caps of a rank scan and of its details.
const maxSummaryLine = 64 << 20

// recordKey names one rank-step.
type recordKey struct {
	mode       string
	step, rank int
}

// recordSet is what the summaries of a run hold, joined.
type recordSet struct {
	run      string
	root     string // the dump root the paths are shown under
	rules    string
	recs     recIndex // where each record lies: a step's records are read when it is analysed
	files    []*os.File
	names    []string             // their paths
	roots    []string             // the dump root of the node that wrote each
	job      map[int]bool         // ranks the records' process groups name
	lost     map[recordKey]string // rank-steps a summary lists but does not hold, and why
	dirs     []dump.RankDir
	warnings []string // about the summaries themselves
	notes    []dumplayout.Note
	lower    []string // reasons that lower the confidence
	known    []int    // ranks of the job that no summary holds (a missing node)
	details  bool     // some summary holds details
	// namedBrief: some summary keeps the ranks process groups name in brief
	namedBrief bool
	groups     map[string][]int // process groups by key, shared by the scans of every step
	// nodeRanks are the ranks each node index holds, by the summaries
	// that name their node; unheaded counts the summaries damaged
	// before their header (whose node and ranks are unknown)
	nodeRanks map[int]map[int]bool
	present   map[int]bool
	unheaded  int
	// missing are the nodes that sent no summary, or none that could be
	// read: no verdict of the join is complete with one
	missing []verdict.MissingNode
	// unsummarised are the ranks of the job no summary holds when a node
	// is missing: expected at every step, unread for want of a summary
	unsummarised map[int]bool
	// findings are what reading the records of the steps found wrong
	// with them, by mode (joinpeers.go)
	findings map[string]*lateFindings
}

// SummaryFiles lists the summaries named by paths: files, and the *.jsonl
// or *.summary files of directories.
func SummaryFiles(paths []string) ([]string, error) {
	var out []string
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		if !fi.IsDir() {
			out = append(out, p)
			continue
		}
		ents, err := os.ReadDir(p)
		if err != nil {
			return nil, err
		}
		for _, e := range ents {
			if !e.IsDir() && (strings.HasSuffix(e.Name(), ".jsonl") || strings.HasSuffix(e.Name(), ".summary")) {
				out = append(out, filepath.Join(p, e.Name()))
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no summary (*.jsonl) found", strings.Join(paths, ", "))
	}
	return out, nil
}

// IsSummary reports whether the file at p starts as a summary.
func IsSummary(p string) bool {
	f, err := safeio.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	var b [64]byte
	n, _ := io.ReadFull(f, b[:])
	return strings.HasPrefix(strings.TrimLeft(string(b[:n]), " \t\r\n"), `{"header":{"schema":"nanhunt/summary/`)
}

// loadSummaries reads and joins summaries. It refuses summaries of
// different runs, rules or formats, and the same rank-step twice (unless
// one of the two holds details and the other does not); a summary cut
// short or damaged, and a node whose summary is missing, become warnings
// that lower the confidence.
func loadSummaries(files []string, rules []policy.Rule) (*recordSet, error) {
	rs := &recordSet{recs: recIndex{}, lost: map[recordKey]string{}, job: map[int]bool{}, groups: map[string][]int{},
		nodeRanks: map[int]map[int]bool{}, present: map[int]bool{}}
	count := 0
	var first string
	lr := &lineReader{br: bufio.NewReaderSize(nil, 64<<10)}
	for _, file := range files {
		h, err := rs.load(file, lr)
		if err != nil {
			rs.close()
			return nil, err
		}
		if h == nil {
			continue // damaged before its header: warned
		}
		if first == "" {
			first, rs.run, rs.root, rs.rules = file, string(h.Run), string(h.DumpPath), h.Rules
		}
		switch {
		case string(h.Run) != rs.run:
			rs.close()
			return nil, fmt.Errorf("%s is of run %q and %s of run %q: summaries of different runs are not joined (give every node the same --run to nanhunt summarize: by default the run is the node's dump path, made absolute)", file, h.Run, first, rs.run)
		case h.Rules != rs.rules:
			rs.close()
			return nil, fmt.Errorf("%s was made with other rules than %s (fingerprints %q and %q): summarise every node with the same --rules", file, first, h.Rules, rs.rules)
		}
		rs.namedBrief = rs.namedBrief || h.NamedBrief
		if h.Node.Index >= 0 {
			rs.present[h.Node.Index] = true
			count = max(count, h.Node.Count)
		}
	}
	if rs.run == "" {
		rs.close()
		return nil, fmt.Errorf("%s: no summary could be read: %s", strings.Join(files, ", "), strings.Join(rs.warnings, "; "))
	}
	if fp := RulesFingerprint(rules); fp != rs.rules {
		rs.close()
		return nil, fmt.Errorf("the summaries were made with other rules (fingerprint %q, these %q): rules apply where the dump is read; pass --rules to summarize", rs.rules, fp)
	}
	rs.missingNodes(count)
	// the rank folders the headers list and the records hold, each once (the
	// first listed), in order; those without a record are lost
	slices.SortStableFunc(rs.dirs, func(a, b dump.RankDir) int {
		return cmp.Or(strings.Compare(a.Mode, b.Mode), cmp.Compare(a.Step, b.Step), cmp.Compare(a.Rank, b.Rank))
	})
	rs.dirs = slices.CompactFunc(rs.dirs, func(a, b dump.RankDir) bool {
		return a.Mode == b.Mode && a.Step == b.Step && a.Rank == b.Rank
	})
	for _, d := range rs.dirs {
		k := recordKey{d.Mode, d.Step, d.Rank}
		if held, _ := rs.recs.holds(k); !held && rs.lost[k] == "" && !d.NoDump {
			rs.lost[k] = "not in the summary"
		}
	}
	return rs, nil
}

// load reads one summary into the set.
func (rs *recordSet) load(file string, lr *lineReader) (*summaryHeader, error) {
	listed := map[recordKey]bool{} // the rank folders this file's header lists
	f, err := safeio.Open(file)
	if err != nil {
		return nil, err
	}
	fileIdx := len(rs.files)
	rs.files, rs.names, rs.roots = append(rs.files, f), append(rs.names, file), append(rs.roots, "")
	lr.br.Reset(f)
	var h *summaryHeader
	var offset int64
	ended, dmg := false, false
lines:
	for line := 1; ; line++ {
		b, err := lr.next()
		if err == io.EOF && len(b) == 0 {
			break
		}
		at := offset
		offset += int64(len(b))
		if err != nil && err != io.EOF {
			rs.damaged(file, at, h, err.Error())
			dmg = true
			break lines
		}
		var l lightLine
		if jerr := unmarshalLine(b, &l); jerr != nil || (l.Header == nil && l.Record == nil && l.End == nil) {
			msg := "not a summary line"
			if jerr != nil {
				msg = jerr.Error()
			}
			if line == 1 {
				return nil, fmt.Errorf("%s: offset 0: not a nanhunt summary (%s)", file, msg)
			}
			rs.damaged(file, at, h, msg)
			dmg = true
			break lines
		}
		switch {
		case l.Header != nil:
			if line != 1 {
				rs.damaged(file, at, h, "a second header")
				dmg = true
				break lines
			}
			if l.Header.Schema != SummarySchema {
				return nil, fmt.Errorf("%s: schema %q: this nanhunt reads %q", file, l.Header.Schema, SummarySchema)
			}
			if err := checkHeader(l.Header); err != nil {
				return nil, fmt.Errorf("%s: offset 0: not a summary nanhunt wrote: %w", file, err)
			}
			h = l.Header
			rs.roots[fileIdx] = string(h.DumpPath)
			for _, hd := range h.Dirs {
				rs.noteRank(h.Node, hd.Rank)
				k := recordKey{hd.Mode, hd.Step, hd.Rank}
				if !listed[k] {
					listed[k] = true
					rs.dirs = append(rs.dirs, hd.rankDir(string(h.DumpPath)))
				}
			}
			rs.details = rs.details || h.Details
			for _, n := range h.Notes {
				rs.notes = append(rs.notes, dumplayout.Note{Dir: string(n.Dir), Text: n.Text})
			}
		case h == nil:
			return nil, fmt.Errorf("%s: offset 0: not a nanhunt summary (no header)", file)
		case l.Record != nil:
			r := l.Record
			if err := checkStepRank(r.Step, r.Rank); err != nil {
				rs.damaged(file, at, h, "a record of "+err.Error())
				dmg = true
				break lines
			}
			k := recordKey{r.Mode, r.Step, r.Rank}
			if held, detailed := rs.recs.holds(k); held {
				// the second phase (details) stands for the first
				switch {
				case !detailed && h.Details:
				case detailed && !h.Details:
					continue
				default:
					return nil, fmt.Errorf("%s and %s both summarise step %d rank %d: give each rank-step once", rs.names[rs.recs.fileOf(k, detailed)], file, r.Step, r.Rank)
				}
			}
			if !listed[k] {
				listed[k] = true
				full, err := rs.decode(b, string(h.DumpPath))
				if err != nil {
					rs.damaged(file, at, h, err.Error())
					dmg = true
					break lines
				}
				rs.dirs = append(rs.dirs, rankDirOf(full))
			}
			for _, g := range r.Groups {
				for _, x := range g {
					rs.job[x] = true
				}
			}
			rs.recs.add(k, recPlace{file: int32(fileIdx), offset: at, size: int32(len(b)), detailed: h.Details})
			delete(rs.lost, k)
			rs.noteRank(h.Node, r.Rank)
		case l.End != nil:
			ended = true
			rs.notSummarised(file, h, l.End, listed)
		}
		if err == io.EOF {
			break lines
		}
	}
	if h != nil && !ended && !dmg {
		rs.damaged(file, offset, h, "it ends before its last line (a node that stopped while writing it)")
	}
	return h, nil
}

// damaged records that a summary could be read only up to offset.
func (rs *recordSet) damaged(file string, offset int64, h *summaryHeader, why string) {
	if h == nil {
		rs.unheaded++
		rs.warnings = append(rs.warnings, fmt.Sprintf("%s: offset %d: damaged before its header (%s): its ranks are unknown", file, offset, why))
		rs.lower = append(rs.lower, fmt.Sprintf("the summary %s could not be read: the ranks it held are missing", filepath.Base(file)))
		return
	}
	var lost []int
	for _, d := range h.Dirs {
		k := recordKey{d.Mode, d.Step, d.Rank}
		if held, _ := rs.recs.holds(k); !held && !d.NoDump {
			rs.lost[k] = fmt.Sprintf("the summary %s is damaged at offset %d (%s) before this rank-step", file, offset, why)
			lost = append(lost, d.Rank)
		}
	}
	slices.Sort(lost)
	lost = slices.Compact(lost)
	rs.warnings = append(rs.warnings, fmt.Sprintf("%s: offset %d: damaged (%s); ranks %s are summarised only up to there", file, offset, why, notation.FormatRanges(lost)))
}

// rankDirOf is the rank folder of a record whose paths are absolute, as
// the set lists it: its folder only (a rank scan takes its files' paths
// from its record), so that a join of many rank-steps stays small.
func rankDirOf(r *record) dump.RankDir {
	return dump.RankDir{Mode: r.Mode, Step: r.Step, Rank: r.Rank, Dir: string(r.Dir), NoDump: r.NoDump}
}

// absPaths puts a record's paths back under the dump root of the node
// that wrote it.
func absPaths(r *record, root string) {
	for _, p := range []*fsjson.String{&r.Dir, &r.Dump, &r.Stack, &r.Construct} {
		if s := string(*p); s != "" && !path.IsAbs(s) && !filepath.IsAbs(s) {
			*p = fsjson.String(filepath.Join(root, filepath.FromSlash(s)))
		}
	}
}

// scans are the rank scans of one step's folders, from their records.
// With scanUntilSevere it stops at the first that holds an anomaly, as a
// read of the files stops: that the step holds one is all such a read is
// for, and a step of thousands of ranks is not held twice.
func (rs *recordSet) scans(dirs []dump.RankDir, mode scanMode) (map[int]*rankScan, error) {
	out := map[int]*rankScan{}
	files := map[int]int32{} // the summary each scan came from
	var colls collShare
	var places map[int]recPlace // the step's records, read from its runs now
	if len(dirs) > 0 {
		places = rs.recs.places(stepKey{dirs[0].Mode, dirs[0].Step})
	}
	for _, d := range dirs {
		k := recordKey{d.Mode, d.Step, d.Rank}
		place, ok := places[d.Rank]
		if !ok {
			why := rs.lost[k]
			if why == "" {
				why = "not in any summary"
			}
			out[d.Rank] = notSummarisedScan(d, "no summary of it: "+why)
			continue
		}
		s, hasDetails, err := rs.scanOf(place)
		if err != nil {
			out[d.Rank] = rs.unreadRecord(d, place, err)
			continue
		}
		files[d.Rank] = place.file
		rs.share(s, &colls)
		if hasDetails {
			s.loadDet = rs.detailsAt(place)
		} else if !place.detailed {
			// phase 1: the files are on the node, not here
			s.det = &details{Warnings: []verdict.Warning{{File: rs.names[place.file], Message: fmt.Sprintf(
				"made with --until-first: no code line, module chain or tensors of step %d rank %d; summarise the steps \"nanhunt trace --detail-steps\" prints again without it",
				d.Step, d.Rank)}}}
		}
		out[d.Rank] = s
		if mode == scanUntilSevere && s.local != nil && s.local.first != nil {
			break // the step holds an anomaly: all that reading it was for
		}
	}
	if len(dirs) > 0 {
		rs.checkPeers(dirs[0].Mode, dirs[0].Step, out, files)
	}
	return out, nil
}

// scanOf is the rank scan of the record at a place, and whether the record
// holds details.
func (rs *recordSet) scanOf(place recPlace) (*rankScan, bool, error) {
	r, hasDetails, err := rs.readSkim(place)
	if err != nil {
		return nil, false, err
	}
	s, err := fromRecord(r, func(p string) string { return p })
	return s, hasDetails, err
}

// notSummarisedScan is the scan of a rank-step that no summary gives.
func notSummarisedScan(d dump.RankDir, why string) *rankScan {
	d.Dump = filepath.Join(d.Dir, "dump.json")
	s := newRankScan(d)
	s.openErr = errNotSummarised(why)
	s.local = &local{}
	return s
}

// unreadRecord is the scan of a rank-step whose record cannot be read when
// its step is (a record damaged in a way its first reading did not see,
// or a summary changed since): the rank-step is unread, and the damage is
// a warning naming the summary and the record's offset, which lowers the
// confidence.
func (rs *recordSet) unreadRecord(d dump.RankDir, place recPlace, err error) *rankScan {
	name, off := rs.names[place.file], place.offset
	f := rs.late(d.Mode)
	if f.broken++; f.broken <= maxContradictions {
		f.warnings = append(f.warnings, verdict.Warning{File: name, Offset: &off, Message: fmt.Sprintf(
			"%s: offset %d: the record of step %d rank %d cannot be read (%v): that rank-step is unread", name, off, d.Step, d.Rank, err)})
		f.lower = append(f.lower, fmt.Sprintf("the summary %s is damaged at offset %d: rank %d of step %d is unread", filepath.Base(name), off, d.Rank, d.Step))
	}
	return notSummarisedScan(d, fmt.Sprintf("its record in %s cannot be read: %v", name, err))
}

// lineReader reads the lines of the summaries, one reader and one line
// buffer for all of them: a join of a thousand nodes' summaries allocates
// neither per file nor per line.
type lineReader struct {
	br   *bufio.Reader
	line []byte
}

// next reads one line of at most maxSummaryLine bytes. The line is valid
// until the next call.
func (lr *lineReader) next() ([]byte, error) {
	out := lr.line[:0]
	defer func() { lr.line = out[:0] }()
	for {
		b, err := lr.br.ReadSlice('\n')
		out = append(out, b...)
		if len(out) > maxSummaryLine {
			return out, fmt.Errorf("a line longer than %d MiB", maxSummaryLine>>20)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return out, err
	}
}

// lightLine is a summary line as the first pass reads it: the header
// whole, of a record only what places it.
type lightLine struct {
	Header *summaryHeader `json:"header,omitempty"`
	Record *struct {
		Mode   string           `json:"mode"`
		Step   int              `json:"step"`
		Rank   int              `json:"rank"`
		Groups map[string][]int `json:"groups"`
	} `json:"record,omitempty"`
	End *summaryEnd `json:"end,omitempty"`
}

// recPlace is where a record lies: its line in one of the set's files.
type recPlace struct {
	offset   int64
	file     int32
	size     int32
	detailed bool // its summary was made with details
}

// read decodes the record at a place.
func (rs *recordSet) read(p recPlace) (*record, error) {
	b, err := rs.line(p)
	if err != nil {
		return nil, err
	}
	return rs.decode(b, rs.roots[p.file])
}

// line reads the line of the record at a place again.
func (rs *recordSet) line(p recPlace) ([]byte, error) {
	b := make([]byte, p.size)
	if _, err := rs.files[p.file].ReadAt(b, p.offset); err != nil {
		return nil, fmt.Errorf("read again: %w", err)
	}
	return b, nil
}

// share makes a scan decoded from a record hold the names and process
// groups its step's other ranks hold, once for all (as a dump's scanner
// does): a thousand ranks' collectives name the same calls and groups.
func (rs *recordSet) share(s *rankScan, colls *collShare) {
	group := func(key string, g []int) []int {
		if g == nil || key == "" {
			return g
		}
		if had, ok := rs.groups[key]; ok && slices.Equal(had, g) {
			return had
		}
		rs.groups[key] = g
		return g
	}
	for i := range s.colls {
		c := &s.colls[i] // its collWhere is its own until colls.share
		c.group = group(c.groupKey, c.group)
	}
	colls.share(s)
	for k, g := range s.groups {
		s.groups[k] = group(k, g)
	}
	for i := range s.events {
		s.events[i].name = unique.Make(s.events[i].name).Value()
	}
}

// readSkim decodes the record at a place without its details, and says
// whether it has them: a step's records are decoded together, and only the
// ranks the verdict names need theirs.
func (rs *recordSet) readSkim(p recPlace) (*record, bool, error) {
	b, err := rs.line(p)
	if err != nil {
		return nil, false, err
	}
	var l struct {
		Record *struct {
			record
			Details presence `json:"details"`
		} `json:"record"`
	}
	if err := unmarshalLine(b, &l); err != nil {
		return nil, false, err
	}
	if l.Record == nil {
		return nil, false, errors.New("not a record")
	}
	r := &l.Record.record
	absPaths(r, rs.roots[p.file])
	return r, bool(l.Record.Details), nil
}

// detailsAt reads the details of the record at a place when called. The
// record was read once already, so a failure now is a change of the
// summary since: a warning in the details.
func (rs *recordSet) detailsAt(p recPlace) func() *details {
	return func() *details {
		r, err := rs.read(p)
		if err == nil && r.Details != nil {
			return r.Details
		}
		why := "its details are gone"
		if err != nil {
			why = err.Error()
		}
		return &details{Warnings: []verdict.Warning{{File: rs.names[p.file], Message: "the summary changed while it was read: " + why}}}
	}
}

// presence is a JSON member that is only noted as there (not null), not
// decoded.
type presence bool

func (p *presence) UnmarshalJSON(b []byte) error {
	*p = presence(string(b) != "null")
	return nil
}

// decode reads one record line.
func (rs *recordSet) decode(b []byte, root string) (*record, error) { return decodeRecord(b, root) }

// decodeRecord reads one record line, its paths under root.
func decodeRecord(b []byte, root string) (*record, error) {
	var l summaryLine
	if err := unmarshalLine(b, &l); err != nil {
		return nil, err
	}
	if l.Record == nil {
		return nil, errors.New("not a record")
	}
	absPaths(l.Record, root)
	return l.Record, nil
}

// unmarshalLine decodes one summary line as encoding/json does (with its
// options), by go-json-experiment/json's decoder, which reads a record
// 2.5 times as fast: a join of thousands of ranks decodes every record
// twice (when the set is loaded, then when its step is analysed).
func unmarshalLine(b []byte, v any) error {
	return jsonv2.Unmarshal(b, v, jsonv1.DefaultOptionsV1())
}

// close closes the summaries.
func (rs *recordSet) close() {
	for _, f := range rs.files {
		f.Close()
	}
	rs.files = nil
}
