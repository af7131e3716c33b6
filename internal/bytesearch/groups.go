package bytesearch

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strconv"
)

// groupKey is the member of a process group argument that lists its ranks,
// as msprobe writes it: {"type": "torch.ProcessGroup", "group_ranks": [0,
// 1], "group_id": "..."}.
var groupKey = []byte(`"group_ranks"`)

// groupTail is how many bytes past a block the vector search reads: the k
// of group_ranks is nine past its g.
const groupTail = 9

// Bounds of what GroupRanks keeps: at most maxGroupLists distinct lists
// holding at most maxGroupRanks ranks and maxGroupBytes of text in all
// (about 6 MiB at most), and a list cut by a window's end carried over
// while it is shorter than maxPendingList. Past them the lists are cut
// (GroupRanks.Cut).
const (
	maxGroupLists  = 1024
	maxGroupRanks  = 1 << 18
	maxGroupBytes  = 4 << 20 // of the distinct lists' text, kept to tell them apart
	maxPendingList = 4 << 20
	// maxListRanks is how many numbers of one list count, as package dump's
	// Reader reads a group's ranks.
	maxListRanks = 1 << 16
)

// GroupRanks are the "group_ranks" lists of a document, each distinct list
// once with the offset of its first key: the ranks of a list are the
// numbers in it that are whole numbers written without a fraction or
// exponent (strconv.Atoi reads them), its first 65,536, as package dump's
// Reader reads a group's ranks. A list holding a string, an object or
// another list names no rank. Lists past the bounds above set Cut.
type GroupRanks struct {
	lists []groupList
	index map[string]int // a list's bytes: its place in lists
	total int            // ranks in lists
	text  int            // bytes of the keys of index
	Cut   bool

	pending   []byte // the bytes after a key whose list the window cut, while open
	open      bool
	openAt    int64  // the offset of that key
	last      []byte // the list read last: a repeat is not looked up again
	lastFound bool
}

// groupList is one distinct list: where its key first is, and its ranks.
type groupList struct {
	at    int64
	ranks []int
}

// Reset empties the set for a new document.
func (g *GroupRanks) Reset() {
	g.lists, g.total, g.text, g.Cut = g.lists[:0], 0, 0, false
	clear(g.index)
	g.pending, g.open, g.last, g.lastFound = g.pending[:0], false, g.last[:0], false
}

// Ranks appends to dst the ranks of the lists whose key first lies before
// the offset before, ascending and once each.
func (g *GroupRanks) Ranks(dst []int, before int64) []int {
	n := len(dst)
	for _, l := range g.lists {
		if l.at < before {
			dst = append(dst, l.ranks...)
		}
	}
	slices.Sort(dst[n:])
	return append(dst[:n], slices.Compact(dst[n:])...)
}

// Window reads the keys in b (at stream offset off) whose first byte lies
// at or after carry-len(groupKey)+1 (the bytes before carry were read with
// the window before), after the new bytes close a list a key of the window
// before left open; final says no bytes follow b. vector uses the vector
// search where the CPU has it.
func (g *GroupRanks) Window(b []byte, carry int, off int64, final, vector bool) {
	from := max(0, carry-len(groupKey)+1)
	if g.open {
		from = g.resume(b, carry, final)
		if g.open {
			return
		}
	}
	for k := from; k < len(b); {
		i := g.index1(b[k:], vector)
		if i < 0 {
			return
		}
		at, after := k+i, k+i+len(groupKey)
		start, more := listStart(b[after:])
		switch {
		case more:
			g.pending, g.open, g.openAt = append(g.pending[:0], b[after:]...), true, off+int64(at)
			g.carry(nil, final)
			return
		case start < 0:
			k = after // no list: null, a string, a number
			continue
		}
		end := bytes.IndexByte(b[after+start:], ']')
		if end < 0 {
			g.pending, g.open, g.openAt = append(g.pending[:0], b[after:]...), true, off+int64(at)
			g.carry(nil, final)
			return
		}
		g.read(b[after:after+start+end+1], off+int64(at))
		k = after + start + end + 1
	}
}

// resume goes on with the value of a key the window before cut, with the
// new bytes b[carry:], and returns where the search for keys goes on.
func (g *GroupRanks) resume(b []byte, carry int, final bool) int {
	nw := b[carry:]
	start, more := listStart(g.pending)
	if more {
		// the value starts in the new bytes (pending holds only blanks and
		// ':'): look at both together
		start, more = listStart(append(g.pending[:len(g.pending):len(g.pending)], nw...))
		if more {
			g.carry(nw, final)
			return len(b)
		}
	}
	if start < 0 {
		g.open, g.pending = false, g.pending[:0]
		return carry // no list
	}
	// the list's ']' is the first in the new bytes that lies past its '['
	skip := max(0, start+1-len(g.pending))
	end := bytes.IndexByte(nw[skip:], ']')
	if end < 0 {
		g.carry(nw, final)
		return len(b)
	}
	g.pending = append(g.pending, nw[:skip+end+1]...)
	g.open = false
	g.read(g.pending, g.openAt)
	return carry + skip + end + 1
}

// listStart is where the '[' of a key's list lies in v, the bytes after the
// key: after blanks, ':' and blanks. It is -1 when the value is no list,
// and more is set when v ends before that can be told.
func listStart(v []byte) (start int, more bool) {
	i := skipBlanks(v, 0)
	if i == len(v) {
		return 0, true
	}
	if v[i] != ':' {
		return -1, false
	}
	i = skipBlanks(v, i+1)
	switch {
	case i == len(v):
		return 0, true
	case v[i] != '[':
		return -1, false
	}
	return i, false
}

func skipBlanks(v []byte, i int) int {
	for i < len(v) && (v[i] == ' ' || v[i] == '\t' || v[i] == '\r' || v[i] == '\n') {
		i++
	}
	return i
}

// carry keeps more of a list cut by a window's end; at the document's end
// (or past the bound) the list is read as far as it goes.
func (g *GroupRanks) carry(more []byte, final bool) {
	if len(g.pending)+len(more) > maxPendingList {
		g.Cut, g.open, g.pending = true, false, g.pending[:0]
		return
	}
	g.pending = append(g.pending, more...)
	if final {
		g.open = false
		g.read(g.pending, g.openAt)
	}
}

// index1 is the offset in b of the first groupKey, -1 if none.
func (g *GroupRanks) index1(b []byte, vector bool) int {
	if !vector || !haveNeedleMasks {
		return indexByRareByte(b)
	}
	k := 0
	// the key's quote comes before its g: blocks are searched for the g
	for blocks := (len(b) - 1 - groupTail) / 32; k/32 < blocks; {
		j := k/32 + groupBlock(b[1+k:], blocks-k/32)
		if j >= blocks {
			k = 32 * blocks
			break
		}
		if i := bytes.Index(b[32*j:min(len(b), 32*j+32+len(groupKey))], groupKey); i >= 0 {
			return 32*j + i
		}
		k = 32 * (j + 1)
	}
	if i := indexByRareByte(b[k:]); i >= 0 {
		return k + i
	}
	return -1
}

// indexByRareByte is bytes.Index(b, groupKey) by the key's rarest byte in
// a dump, its k (bytes.Index starts from the quote, which is everywhere).
func indexByRareByte(b []byte) int {
	const at = 10 // the k of "group_ranks"
	for k := at; k < len(b); {
		i := bytes.IndexByte(b[k:], 'k')
		if i < 0 {
			return -1
		}
		k += i
		if k+len(groupKey)-at <= len(b) && bytes.Equal(b[k-at:k-at+len(groupKey)], groupKey) {
			return k - at
		}
		k++
	}
	return -1
}

// read reads what follows a key at offset at: blanks, ':', blanks, then a
// list up to its ']' (the last byte of v); anything else is no list of
// ranks.
func (g *GroupRanks) read(v []byte, at int64) {
	v = bytes.TrimLeft(v, " \t\r\n")
	if len(v) == 0 || v[0] != ':' {
		return
	}
	v = bytes.TrimLeft(v[1:], " \t\r\n")
	if len(v) == 0 || v[0] != '[' {
		return
	}
	if g.lastFound && bytes.Equal(v, g.last) {
		return // the list before it again: already held, with an earlier offset
	}
	g.last, g.lastFound = append(g.last[:0], v...), true
	if _, ok := g.index[string(v)]; ok {
		return
	}
	ranks, ok := listRanks(v)
	if !ok {
		return // names no rank
	}
	if len(g.lists) >= maxGroupLists || g.total+len(ranks) > maxGroupRanks || g.text+len(v) > maxGroupBytes {
		g.Cut = true
		return
	}
	if g.index == nil {
		g.index = map[string]int{}
	}
	g.index[string(v)] = len(g.lists)
	g.lists = append(g.lists, groupList{at: at, ranks: ranks})
	g.total, g.text = g.total+len(ranks), g.text+len(v)
}

// listRanks reads the ranks of a list, v from its '[' to its ']'; false
// when it is cut (by the document's end) or holds a string, an object or a
// list: such a list names no rank.
func listRanks(v []byte) ([]int, bool) {
	list := v[1:]
	if len(list) == 0 || list[len(list)-1] != ']' {
		return nil, false // cut by the document's end
	}
	list = list[:len(list)-1]
	if bytes.ContainsAny(list, "[{\"") {
		return nil, false
	}
	ranks := []int{}
	for f := range bytes.FieldsFuncSeq(list, isListSpace) {
		if r, err := strconv.Atoi(string(f)); err == nil && len(ranks) < maxListRanks {
			ranks = append(ranks, r)
		}
	}
	return ranks, true
}

func isListSpace(c rune) bool { return c == ',' || c == ' ' || c == '\n' || c == '\t' || c == '\r' }

// ReadGroups reads the "group_ranks" lists of the bytes of ra from
// h.GroupsTo to size, after a search that stopped early (Hits.Partial)
// or was cut by a failed read: Hits.Groups then holds those of the whole
// document. It reads through the Prefilter's buffer; the Hits are
// otherwise unchanged.
func (p *Prefilter) ReadGroups(ra io.ReaderAt, size int64) error {
	h := &p.hits
	if h.GroupsTo >= size {
		return nil
	}
	win := len(p.buf) - carryLen
	carry := 0
	if h.GroupsTo > 0 {
		// the bytes before GroupsTo that a key may start in: read again
		carry = int(min(int64(carryLen), h.GroupsTo))
		if _, err := ra.ReadAt(p.buf[:carry], h.GroupsTo-int64(carry)); err != nil {
			return fmt.Errorf("offset %d: %w", h.GroupsTo-int64(carry), err)
		}
	}
	for pos := h.GroupsTo; pos < size; {
		n := int(min(int64(win), size-pos))
		if got, err := ra.ReadAt(p.buf[carry:carry+n], pos); got < n {
			if err == nil || err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return fmt.Errorf("offset %d: %w", pos+int64(got), err)
		}
		b := p.buf[:carry+n]
		pos += int64(n)
		p.groups.Window(b, carry, pos-int64(len(b)), pos == size, p.vector)
		keep := min(carryLen, len(b))
		copy(p.buf, b[len(b)-keep:])
		carry = keep
		h.GroupsTo = pos
	}
	return nil
}

// StartGroups readies the Prefilter to read only the "group_ranks" lists
// of a document (one parsed whole, without a search), with FollowGroups
// and ReadGroups; the rest of the Hits it returns says nothing.
func (p *Prefilter) StartGroups() *Hits {
	p.reset()
	return &p.hits
}

// FollowGroups returns a reader of r, a document read again from its
// start after a search, that reads the "group_ranks" lists of the bytes
// past Hits.GroupsTo as they go by: a walk that reads the rest of the
// file reads its lists too, and ReadGroups reads only what it left.
func (p *Prefilter) FollowGroups(r io.Reader) io.Reader {
	return &groupFollower{r: r, p: p}
}

// groupFollower is FollowGroups' reader.
type groupFollower struct {
	r    io.Reader
	p    *Prefilter
	pos  int64  // the offset of the next byte read
	tail []byte // the bytes before pos that a key may start in
	buf  []byte // tail, then the bytes read
}

// Read reads from the document, and the lists of what it reads past
// GroupsTo.
func (f *groupFollower) Read(b []byte) (int, error) {
	n, err := f.r.Read(b)
	h := &f.p.hits
	start := f.pos
	f.pos += int64(n)
	if start <= h.GroupsTo && h.GroupsTo < f.pos {
		cut := int(h.GroupsTo - start)
		f.keepTail(b[:cut])
		f.follow(b[cut:n], h.GroupsTo)
		f.keepTail(b[cut:n])
		h.GroupsTo = f.pos
		return n, err
	}
	f.keepTail(b[:n])
	return n, err
}

// follow reads the lists of fresh, the bytes at offset off, which follow
// f.tail. The keys that start in the tail are looked for in the tail and
// the first bytes of fresh, then those of fresh in fresh itself (no key
// fits in fewer bytes than it has, so none is read twice).
func (f *groupFollower) follow(fresh []byte, off int64) {
	g, vector := &f.p.groups, f.p.vector
	k := min(len(fresh), len(groupKey)-1)
	f.buf = append(append(f.buf[:0], f.tail...), fresh[:k]...)
	g.Window(f.buf, len(f.tail), off-int64(len(f.tail)), false, vector)
	g.Window(fresh, k, off, false, vector)
}

// keepTail keeps the last bytes read, those a key cut by the next read
// may start in.
func (f *groupFollower) keepTail(b []byte) {
	keep := len(groupKey) - 1
	if len(b) >= keep {
		f.tail = append(f.tail[:0], b[len(b)-keep:]...)
		return
	}
	f.tail = append(f.tail, b...)
	f.tail = f.tail[max(0, len(f.tail)-keep):]
}
