package bytesearch

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// groupOracle is the plain rule: every "group_ranks" key followed by a
// list of numbers, blanks and commas up to its ']'; the whole numbers of
// each (at most maxListRanks a list) whose key lies before the offset
// before. A list holding anything else, or that no ']' closes, names no
// rank, and a key before a list's first ']' is not read (in a document
// msprobe writes no list of ranks holds a key).
func groupOracle(doc string, before int64) (ranks []int) {
	keys := regexp.MustCompile(`"group_ranks"[ \t\r\n]*:[ \t\r\n]*\[`)
	for pos := 0; ; {
		m := keys.FindStringIndex(doc[pos:])
		if m == nil {
			break
		}
		m[0], m[1] = m[0]+pos, m[1]+pos
		end := strings.IndexByte(doc[m[1]:], ']')
		if end < 0 {
			break
		}
		pos = m[1] + end + 1 // a key before the list's first ']' is not read
		if strings.ContainsAny(doc[m[1]:m[1]+end], "[{\"") || int64(m[0]) >= before {
			continue
		}
		n := 0
		for _, f := range strings.FieldsFunc(doc[m[1]:m[1]+end], func(c rune) bool { return isListSpace(c) }) {
			if r, err := strconv.Atoi(f); err == nil && n < maxListRanks {
				ranks = append(ranks, r)
				n++
			}
		}
	}
	slices.Sort(ranks)
	return slices.Compact(ranks)
}

// groupsOf runs GroupRanks over doc in windows of the given size, each
// with the carry bytes of the one before in front, as Prefilter feeds it.
func groupsOf(doc []byte, window, carry int, vector bool) *GroupRanks {
	g := &GroupRanks{}
	g.Reset()
	for pos := 0; ; pos += window {
		from := max(0, pos-carry)
		end := min(len(doc), pos+window)
		g.Window(doc[from:end], pos-from, int64(from), end == len(doc), vector)
		if end == len(doc) {
			return g
		}
	}
}

var groupPieces = []string{
	`"group_ranks": [0, 1]`, "\"group_ranks\": [\n      2,\n      3\n     ]", `"group_ranks":[7,5,1000000]`,
	`"group_ranks": null`, `"group_ranks": "4"`, `"group_ranks": [1.0, -2, 1e3, 9]`, `"group_ranks": [[1], 2]`,
	`"group_ranks": [{"a": 1}]`, `"group_ranks"  :  [ 11 ,12 ]`, `"type": "group_ranks"`, `"group_rank": [99]`,
	`"group_id": "1a2b"`, `{"type": "torch.ProcessGroup", "group_ranks": [0, 1, 2, 3], "group_id": "x"}`,
	`"Max": 1.5`, `]`, `[`, ` `, "\n", `,`, `"group_ranks": [131072, 300000]`,
}

// TestGroupRanksLikeOracle holds the windowed search, vector and byte by
// byte, to the plain rule on random documents cut into windows of every
// size, lists and keys spanning their edges.
func TestGroupRanksLikeOracle(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for trial := range 3000 {
		doc := randomPieces(rng, groupPieces, 40)
		before := int64(len(doc))
		if rng.IntN(3) == 0 {
			before = rng.Int64N(int64(len(doc)) + 1)
		}
		want := groupOracle(doc, before)
		for _, vector := range []bool{true, false} {
			window := 1 + rng.IntN(300)
			g := groupsOf([]byte(doc), window, carryLen, vector)
			got := g.Ranks(nil, before)
			if !slices.Equal(got, want) || g.Cut {
				t.Fatalf("trial %d, window %d, vector %v, before %d:\n%q\ngot %v cut %v, want %v", trial, window, vector, before, doc, got, g.Cut, want)
			}
		}
	}
}

// TestGroupRanksBounds: past maxGroupLists distinct lists the set is cut,
// and a repeated list is held once.
func TestGroupRanksBounds(t *testing.T) {
	var sb strings.Builder
	for i := range maxGroupLists + 5 {
		fmt.Fprintf(&sb, `"group_ranks": [%d] "group_ranks": [%d] `, i, i)
	}
	g := groupsOf([]byte(sb.String()), 1<<16, carryLen, true)
	if !g.Cut || len(g.lists) != maxGroupLists {
		t.Fatalf("cut %v, %d lists; want cut and %d", g.Cut, len(g.lists), maxGroupLists)
	}
}

// TestPrefilterGroupsLikeOracle: a search, whole or stopped at its first
// NaN and then ReadGroups, holds the lists of the whole document.
func TestPrefilterGroupsLikeOracle(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	pieces := append(slices.Clone(groupPieces), `"Max": NaN`)
	for trial := range 500 {
		doc := "{" + randomPieces(rng, pieces, 400)
		want := groupOracle(doc, int64(len(doc)))
		p := NewPrefilter(1+rng.IntN(2000), 0, SearchRules{})
		scan := p.Scan
		if trial%2 == 1 {
			scan = p.ScanUntilSevere
		}
		h, err := scan(strings.NewReader(doc))
		if err != nil {
			t.Fatal(err)
		}
		if err := p.ReadGroups(strings.NewReader(doc), int64(len(doc))); err != nil {
			t.Fatal(err)
		}
		if got := h.Groups.Ranks(nil, int64(len(doc))); !slices.Equal(got, want) || h.Groups.Cut || h.GroupsTo != int64(len(doc)) {
			t.Fatalf("trial %d (partial %v): got %v cut %v to %d, want %v of %d\n%q", trial, h.Partial, got, h.Groups.Cut, h.GroupsTo, want, len(doc), doc)
		}
	}
}

// TestFollowGroupsLikeOracle: a search stopped at its first NaN, then the
// document read again from its start in pieces of any size through
// FollowGroups, then ReadGroups for what that read left, holds the lists
// of the whole document.
func TestFollowGroupsLikeOracle(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	pieces := append(slices.Clone(groupPieces), `"Max": NaN`)
	for trial := range 500 {
		doc := "{" + randomPieces(rng, pieces, 400)
		want := groupOracle(doc, int64(len(doc)))
		p := NewPrefilter(1+rng.IntN(2000), 0, SearchRules{})
		h, err := p.ScanUntilSevere(strings.NewReader(doc))
		if err != nil {
			t.Fatal(err)
		}
		r := p.FollowGroups(strings.NewReader(doc))
		upTo := rng.IntN(len(doc) + 1)
		buf := make([]byte, 1+rng.IntN(100))
		for read := 0; read < upTo; {
			n, err := r.Read(buf[:min(len(buf), upTo-read)])
			read += n
			if err != nil {
				break
			}
		}
		if err := p.ReadGroups(strings.NewReader(doc), int64(len(doc))); err != nil {
			t.Fatal(err)
		}
		if got := h.Groups.Ranks(nil, int64(len(doc))); !slices.Equal(got, want) {
			t.Fatalf("trial %d (partial %v, followed to %d): got %v, want %v\n%q", trial, h.Partial, upTo, got, want, doc)
		}
	}
}

// randomPieces is up to most of the pieces in a random order, each
// followed by up to 69 spaces.
func randomPieces(rng *rand.Rand, pieces []string, most int) string {
	var sb strings.Builder
	for range rng.IntN(most) {
		sb.WriteString(pieces[rng.IntN(len(pieces))])
		sb.WriteString(strings.Repeat(" ", rng.IntN(70)))
	}
	return sb.String()
}

// FuzzGroupRanks holds the windowed search of the lists, vector and byte
// by byte, to the plain rule on any bytes and window size.
func FuzzGroupRanks(f *testing.F) {
	for _, p := range groupPieces {
		f.Add([]byte(p), uint16(7))
	}
	f.Add([]byte("\"group_ranks\": [0, 1]  \"group_ranks\":\n[\n 2,\n 3\n]"), uint16(5))
	f.Fuzz(func(t *testing.T, doc []byte, window uint16) {
		want := groupOracle(string(doc), int64(len(doc)))
		for _, vector := range []bool{true, false} {
			g := groupsOf(doc, 1+int(window%512), carryLen, vector)
			if got := g.Ranks(nil, int64(len(doc))); !slices.Equal(got, want) || g.Cut {
				t.Fatalf("window %d, vector %v: got %v cut %v, want %v", 1+window%512, vector, got, g.Cut, want)
			}
		}
	})
}

// TestGroupRanksBlanksAcrossWindows: a key whose ':' and '[' come after
// more blanks than a window holds is still read.
func TestGroupRanksBlanksAcrossWindows(t *testing.T) {
	doc := []byte(`"group_ranks"` + strings.Repeat(" ", 300) + ":" + strings.Repeat("\n", 300) + "[4, 5]")
	for _, window := range []int{7, 64, 100, 1000} {
		if got := groupsOf(doc, window, carryLen, true).Ranks(nil, int64(len(doc))); !slices.Equal(got, []int{4, 5}) {
			t.Errorf("window %d: got %v, want [4 5]", window, got)
		}
	}
}
