package reference

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/nanhunt/nanhunt/internal/jsonoracle"
)

// fileStatus is how much of a rank's dump.json could be used.
type fileStatus uint8

const (
	fileRead    fileStatus = iota
	fileDamaged            // broke after some entries; those are used
	fileUnread             // missing, not a regular file, no entry, no data
)

// dumpFile is a decoded dump.json: the members of "data" in file order.
type dumpFile struct {
	status  fileStatus
	entries []jsonoracle.Member
	problem string
	named   []int // the ranks its group_ranks lists name (README 9)
}

// readDump decodes a dump.json whole; when that fails it keeps the entries
// of "data" that are complete before the damage.
func readDump(path string) dumpFile {
	fi, err := os.Stat(path)
	if err != nil {
		return dumpFile{status: fileUnread, problem: fmt.Sprintf("open: %v", err)}
	}
	if !fi.Mode().IsRegular() {
		return dumpFile{status: fileUnread, problem: "not a regular file"}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return dumpFile{status: fileUnread, problem: fmt.Sprintf("read: %v", err)}
	}
	root, err := jsonoracle.Decode(data)
	if err == nil {
		d := wholeDump(root)
		if d.status == fileRead {
			d.named = namedRanks(nil, root)
		} else {
			d.named = namedInEntries(d.entries)
		}
		return d
	}
	entries, reached, perr := scanEntries(data)
	problem := fmt.Sprintf("damaged: %v", err)
	if perr != nil {
		problem = fmt.Sprintf("damaged: %v", perr)
	}
	if len(entries) == 0 {
		if reached {
			problem = "no entry before the damage: " + problem
		}
		return dumpFile{status: fileUnread, problem: problem}
	}
	return dumpFile{status: fileDamaged, entries: entries, problem: problem, named: namedInEntries(entries)}
}

// wholeDump takes the entries of a well-formed dump.json.
func wholeDump(root *jsonoracle.Node) dumpFile {
	if root.Kind != jsonoracle.Object {
		return dumpFile{status: fileUnread, problem: "top level is not an object"}
	}
	var datas []*jsonoracle.Node
	for _, m := range root.Members {
		if m.Name == "data" {
			datas = append(datas, m.Value)
		}
	}
	if len(datas) > 1 {
		// README 5: a second "data" member is damage after the entries of the first
		d := dumpFile{status: fileDamaged, problem: "a second data member"}
		if datas[0].Kind == jsonoracle.Object {
			d.entries = datas[0].Members
		}
		if len(d.entries) == 0 {
			d.status = fileUnread
		}
		return d
	}
	data := member(root, "data")
	if data == nil {
		return dumpFile{status: fileUnread, problem: "no data member"}
	}
	if data.Kind != jsonoracle.Object {
		return dumpFile{status: fileUnread, problem: "data is not an object"}
	}
	if len(data.Members) == 0 {
		return dumpFile{status: fileUnread, problem: "empty data"}
	}
	return dumpFile{status: fileRead, entries: data.Members}
}

// scanner finds the extent of JSON values in a document that may be cut
// short; the values themselves are decoded by jsonoracle.
type scanner struct {
	b   []byte
	pos int
}

var errCut = errors.New("file ends inside a value")

func (s *scanner) ws() {
	for s.pos < len(s.b) && strings.IndexByte(" \t\r\n", s.b[s.pos]) >= 0 {
		s.pos++
	}
}

func (s *scanner) peek() byte {
	s.ws()
	if s.pos >= len(s.b) {
		return 0
	}
	return s.b[s.pos]
}

func (s *scanner) expect(c byte) error {
	if s.peek() != c {
		return fmt.Errorf("offset %d: want %q", s.pos, c)
	}
	s.pos++
	return nil
}

// value returns the next whole value, decoded.
func (s *scanner) value() (*jsonoracle.Node, error) {
	s.ws()
	start := s.pos
	if err := s.skip(); err != nil {
		return nil, err
	}
	n, err := jsonoracle.Decode(s.b[start:s.pos])
	if err != nil {
		return nil, fmt.Errorf("offset %d: %w", start, err)
	}
	return n, nil
}

// skip moves past one value without checking it.
func (s *scanner) skip() error {
	if s.pos >= len(s.b) {
		return errCut
	}
	switch s.b[s.pos] {
	case '"':
		return s.skipString()
	case '{', '[':
		depth := 0
		for s.pos < len(s.b) {
			switch s.b[s.pos] {
			case '"':
				if err := s.skipString(); err != nil {
					return err
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					s.pos++
					return nil
				}
			}
			s.pos++
		}
		return errCut
	}
	start := s.pos
	for s.pos < len(s.b) && strings.IndexByte(",}] \t\r\n", s.b[s.pos]) < 0 {
		s.pos++
	}
	if s.pos == start {
		return fmt.Errorf("offset %d: no value", start)
	}
	if s.pos == len(s.b) {
		return errCut
	}
	return nil
}

func (s *scanner) skipString() error {
	s.pos++ // opening quote
	for s.pos < len(s.b) {
		switch s.b[s.pos] {
		case '\\':
			s.pos += 2
			continue
		case '"':
			s.pos++
			return nil
		}
		s.pos++
	}
	return errCut
}

func (s *scanner) name() (string, error) {
	n, err := s.value()
	if err != nil {
		return "", err
	}
	if n.Kind != jsonoracle.String {
		return "", fmt.Errorf("offset %d: member name is not a string", s.pos)
	}
	return n.Literal, s.expect(':')
}

// scanEntries reads the top-level object of a damaged dump.json member by
// member and returns the entries of "data" complete before the damage;
// reached tells that "data" was found.
func scanEntries(b []byte) (entries []jsonoracle.Member, reached bool, err error) {
	s := &scanner{b: b}
	if err := s.expect('{'); err != nil {
		return nil, false, err
	}
	for {
		if s.peek() == '}' {
			return entries, reached, nil
		}
		name, err := s.name()
		if err != nil {
			return entries, reached, err
		}
		if name == "data" && reached {
			return entries, reached, fmt.Errorf("offset %d: a second data member", s.pos)
		}
		if name == "data" && s.peek() == '{' {
			reached = true
			s.pos++
			for s.peek() != '}' {
				en, err := s.name()
				if err != nil {
					return entries, reached, err
				}
				v, err := s.value()
				if err != nil {
					return entries, reached, err
				}
				entries = append(entries, jsonoracle.Member{Name: en, Value: v})
				if s.peek() == ',' {
					s.pos++
					continue
				}
				if s.peek() != '}' {
					return entries, reached, fmt.Errorf("offset %d: want ',' or '}' in data", s.pos)
				}
			}
			s.pos++
		} else if _, err := s.value(); err != nil {
			return entries, reached, err
		}
		switch s.peek() {
		case ',':
			s.pos++
		case '}':
		default:
			return entries, reached, fmt.Errorf("offset %d: want ',' or '}'", s.pos)
		}
	}
}

// frame is one stack.json line.
type frame struct {
	file string
	line int
	fn   string
	code string
}

// parseFrame reads "File {path}, line {n}, in {func}, \n {source}".
func parseFrame(s string) frame {
	var f frame
	rest := strings.TrimPrefix(strings.TrimSpace(s), "File ")
	i := strings.Index(rest, ", line ")
	if i < 0 {
		f.code = strings.TrimSpace(rest)
		return f
	}
	f.file, rest = rest[:i], rest[i+len(", line "):]
	j := strings.Index(rest, ", in ")
	if j < 0 {
		return f
	}
	f.line, _ = strconv.Atoi(strings.TrimSpace(rest[:j]))
	rest = rest[j+len(", in "):]
	if k := strings.Index(rest, "\n"); k >= 0 {
		f.fn = strings.TrimSuffix(strings.TrimSpace(rest[:k]), ",")
		f.code = strings.TrimSpace(rest[k+1:])
	} else {
		f.fn = strings.TrimSuffix(strings.TrimSpace(rest), ",")
	}
	return f
}

// readStacks reads stack.json v1 ({"op": [lines]}) or v2 ({"0": [[ops],
// [lines]]}, recognised by its key "0"). A missing or damaged file gives no
// stacks.
func readStacks(path string) map[string][]frame {
	root := readJSON(path)
	out := map[string][]frame{}
	if root == nil || root.Kind != jsonoracle.Object {
		return out
	}
	lines := func(n *jsonoracle.Node) []frame {
		var fs []frame
		if n == nil || n.Kind != jsonoracle.Array {
			return nil
		}
		for _, l := range n.Elems {
			if l.Kind == jsonoracle.String {
				fs = append(fs, parseFrame(l.Literal))
			}
		}
		return fs
	}
	if member(root, "0") != nil {
		for _, m := range root.Members {
			v := m.Value
			if v.Kind != jsonoracle.Array || len(v.Elems) != 2 || v.Elems[0].Kind != jsonoracle.Array {
				continue
			}
			fs := lines(v.Elems[1])
			for _, name := range v.Elems[0].Elems {
				if name.Kind == jsonoracle.String {
					out[name.Literal] = fs
				}
			}
		}
		return out
	}
	for _, m := range root.Members {
		out[m.Name] = lines(m.Value)
	}
	return out
}

// readConstruct reads construct.json: entry name -> parent name ("" for
// null and "", the first item of a [name, micro_step] pair).
func readConstruct(path string) map[string]string {
	root := readJSON(path)
	out := map[string]string{}
	if root == nil || root.Kind != jsonoracle.Object {
		return out
	}
	for _, m := range root.Members {
		v := m.Value
		if v.Kind == jsonoracle.Array && len(v.Elems) > 0 {
			v = v.Elems[0]
		}
		if v.Kind == jsonoracle.String {
			out[m.Name] = v.Literal
		}
	}
	return out
}

func readJSON(path string) *jsonoracle.Node {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	n, err := jsonoracle.Decode(b)
	if err != nil {
		return nil
	}
	return n
}

// namedInEntries are the ranks the group_ranks lists of the entries name.
func namedInEntries(entries []jsonoracle.Member) []int {
	var out []int
	for _, m := range entries {
		out = namedRanks(out, m.Value)
	}
	return out
}

// namedRanks appends the ranks named by the group_ranks members in n and
// below it (README 9): each such member whose value is a list of numbers
// names its whole numbers written without a fraction or exponent, its
// first 65,536; a list holding anything else names none.
func namedRanks(out []int, n *jsonoracle.Node) []int {
	if n == nil {
		return out
	}
	for _, e := range n.Elems {
		out = namedRanks(out, e)
	}
	for _, m := range n.Members {
		if m.Name != "group_ranks" {
			out = namedRanks(out, m.Value)
			continue
		}
		out = append(out, listedRanks(m.Value)...)
	}
	return out
}

// listedRanks reads one group_ranks value.
func listedRanks(v *jsonoracle.Node) []int {
	if v == nil || v.Kind != jsonoracle.Array {
		return nil
	}
	var ranks []int
	for _, e := range v.Elems {
		if e.Kind != jsonoracle.Number {
			return nil
		}
		if r, err := strconv.Atoi(e.Literal); err == nil && len(ranks) < 1<<16 {
			ranks = append(ranks, r)
		}
	}
	return ranks
}
