package reference

import (
	"slices"
	"strings"
	"testing"
)

// Across the ranks of a step (README section 6).
func TestAcrossRanks(t *testing.T) {
	ar := func(before, after string) string {
		return E("Distributed.all_reduce.0.forward", allReduce(before, after, ""))
	}
	log := E("Torch.log.0.forward", fwd(in(ok), T(nan, nan)))
	exp := E("Torch.exp.0.forward", fwd(in(ok), T(pinf, fin)))
	sendTo := func(name string, peer int, x string) string { return E(name, fwd(in(x, iv(peer)), x, iv(peer))) }
	recvFrom := func(name string, peer int, x string) string { return E(name, fwd(in("null", iv(peer)), x, iv(peer))) }

	t.Run("happened before: a later birth is not an origin", func(t *testing.T) {
		v := analyse(t, oneStep(map[int][]string{
			0: {ar(ok, ok), exp},
			1: {log, ar(ok, ok)},
		}), Options{})
		o := origin(t, v)
		expectInts(t, "origin.ranks", o.Ranks, []int{1})
		expect(t, "origin.op", o.Op, "Torch.log.0.forward")
		expect(t, "origin.tie", o.Tie, false)
		r := role(t, v, 0, 0)
		expect(t, "rank 0 role", r.Role, "later")
		expect(t, "rank 0 op", r.Op, "Torch.exp.0.forward")
		expect(t, "rank 0 kind", r.Kind, "inf")
	})
	t.Run("happened before through a p2p key", func(t *testing.T) {
		v := analyse(t, oneStep(map[int][]string{
			0: {log, sendTo("Distributed.send.0.forward", 1, ok)},
			1: {recvFrom("Distributed.recv.0.forward", 0, ok), exp},
		}), Options{})
		expectInts(t, "origin.ranks", origin(t, v).Ranks, []int{0})
		expect(t, "rank 1 role", role(t, v, 0, 1).Role, "later")
	})
	t.Run("no shared pairing key: no order", func(t *testing.T) {
		a, b := group("a", 0, 2), group("b", 1, 3)
		v := analyse(t, oneStep(map[int][]string{
			0: {log, E("Distributed.all_reduce.0.forward", allReduce(ok, ok, a))},
			1: {E("Distributed.all_reduce.0.forward", allReduce(ok, ok, b)), exp},
			2: {E("Distributed.all_reduce.0.forward", allReduce(ok, ok, a))},
			3: {E("Distributed.all_reduce.0.forward", allReduce(ok, ok, b))},
		}), Options{})
		o := origin(t, v)
		expectInts(t, "origin.ranks", o.Ranks, []int{0, 1})
		expect(t, "origin.tie", o.Tie, true)
	})
	t.Run("no clock between two births: a tie", func(t *testing.T) {
		v := analyse(t, oneStep(map[int][]string{
			0: {exp, ar(ok, ok)},
			1: {log, ar(ok, ok)},
		}), Options{})
		o := origin(t, v)
		expectInts(t, "origin.ranks", o.Ranks, []int{0, 1})
		expect(t, "origin.tie", o.Tie, true)
		expect(t, "origin.op (main rank 0)", o.Op, "Torch.exp.0.forward")
		expect(t, "origin.kind", o.Kind, "inf")
		expect(t, "origin.confidence", o.Confidence, "medium")
	})
	t.Run("a captured birth is preferred over an inherited rank", func(t *testing.T) {
		v := analyse(t, oneStep(map[int][]string{
			0: {log},
			1: {E("Torch.mul.0.forward", fwd(in(T(nan, nan), ok), T(nan, nan)))},
		}), Options{})
		o := origin(t, v)
		expectInts(t, "origin.ranks", o.Ranks, []int{0})
		expect(t, "origin.captured", o.Captured, true)
		expect(t, "origin.confidence", o.Confidence, "medium")
		expect(t, "rank 1 role", role(t, v, 0, 1).Role, "inherited")
	})
	t.Run("without births the candidates are the sources: main is the lowest read", func(t *testing.T) {
		v := analyse(t, oneStep(map[int][]string{
			0: {E("Torch.add.0.forward", fwd(in(ok, ok), ok))},
			1: {E("Torch.add.0.forward", fwd(in(ok, ok), ok))},
			2: {E("Torch.mul.0.forward", fwd(in(T(nan, nan), ok), T(nan, nan)))},
			3: {E("Torch.add.0.forward", fwd(in(T(pinf, fin), ok), T(pinf, fin)))},
		}), Options{})
		o := origin(t, v)
		expectInts(t, "origin.ranks", o.Ranks, []int{2, 3})
		expect(t, "origin.op", o.Op, "Torch.mul.0.forward")
		expect(t, "origin.captured", o.Captured, false)
		expect(t, "origin.tie", o.Tie, true)
		expect(t, "origin.stage", o.Stage, "forward")
	})
	t.Run("a collective origin in one group", func(t *testing.T) {
		v := analyse(t, oneStep(map[int][]string{
			0: {ar(ok, T(pinf, fin))},
			1: {ar(ok, T(pinf, fin))},
		}), Options{})
		o := origin(t, v)
		expectInts(t, "origin.ranks", o.Ranks, []int{0, 1})
		expect(t, "origin.op", o.Op, "Distributed.all_reduce.0.forward")
		expect(t, "origin.collective", o.Collective, true)
		expect(t, "origin.captured", o.Captured, true)
		expect(t, "origin.tie", o.Tie, false)
		expect(t, "origin.kind", o.Kind, "inf")
		expect(t, "origin.confidence", o.Confidence, "high")
		if v.Carrier != nil || len(v.Spread) != 0 {
			t.Errorf("a collective origin is not a carrier: carrier %s, spread %+v", fmtHop(v.Carrier), v.Spread)
		}
		expect(t, "rank 1 role", role(t, v, 0, 1).Role, "source")
	})
	t.Run("collective origins in two disjoint groups: a tie", func(t *testing.T) {
		a, b := group("a", 0, 1), group("b", 2, 3)
		g := func(gr string) string {
			return E("Distributed.all_reduce.0.forward", allReduce(ok, T(pinf, fin), gr))
		}
		v := analyse(t, oneStep(map[int][]string{0: {g(a)}, 1: {g(a)}, 2: {g(b)}, 3: {g(b)}}), Options{})
		o := origin(t, v)
		expectInts(t, "origin.ranks", o.Ranks, []int{0, 1, 2, 3})
		expect(t, "origin.collective", o.Collective, true)
		expect(t, "origin.tie", o.Tie, true)
		expect(t, "origin.confidence", o.Confidence, "medium")
	})
	t.Run("only receivers were read: unread origin", func(t *testing.T) {
		r := oneStep(map[int][]string{0: {ar(ok, T(nan, nan))}})
		r[0][1] = rankFiles{noDump: true}
		v := analyse(t, r, Options{})
		o := origin(t, v)
		expect(t, "origin.unread", o.Unread, true)
		expectInts(t, "origin.ranks", o.Ranks, []int{1})
		expect(t, "origin.op (the lowest receiver's)", o.Op, "Distributed.all_reduce.0.forward")
		expect(t, "origin.captured", o.Captured, false)
		expect(t, "origin.collective", o.Collective, false)
		expect(t, "origin.confidence", o.Confidence, "low")
		expect(t, "rank 0 role", role(t, v, 0, 0).Role, "received")
	})
	t.Run("carrier: the first hop the lowest source sent in; spread follows the value", func(t *testing.T) {
		v := analyse(t, oneStep(map[int][]string{
			0: {log, sendTo("Distributed.send.0.forward", 1, T(nan, nan))},
			1: {recvFrom("Distributed.recv.0.forward", 0, T(nan, nan)), sendTo("Distributed.send.0.forward", 2, T(nan, nan))},
			2: {recvFrom("Distributed.recv.0.forward", 1, T(nan, nan))},
		}), Options{})
		expectInts(t, "origin.ranks", origin(t, v).Ranks, []int{0})
		expectHop(t, "carrier", v.Carrier, Hop{Op: "Distributed.send.0.forward", FromRanks: []int{0}, ToRanks: []int{1}})
		if len(v.Spread) != 2 {
			t.Fatalf("spread: got %+v, want 2 hops", v.Spread)
		}
		expectHop(t, "spread[1]", &v.Spread[1], Hop{Op: "Distributed.send.0.forward", FromRanks: []int{1}, ToRanks: []int{2}})
	})
	t.Run("carrier when no source sent: the lowest sender's first hop", func(t *testing.T) {
		r := oneStep(map[int][]string{
			0: {recvFrom("Distributed.recv.0.forward", 1, T(nan, nan))},
			1: {recvFrom("Distributed.recv.0.forward", 2, T(nan, nan)), sendTo("Distributed.send.0.forward", 0, T(nan, nan))},
		})
		r[0][2] = rankFiles{noDump: true}
		v := analyse(t, r, Options{})
		o := origin(t, v)
		expect(t, "origin.unread", o.Unread, true)
		expectInts(t, "origin.ranks", o.Ranks, []int{2})
		expect(t, "origin.op (rank 1 received from the unread rank)", o.Op, "Distributed.recv.0.forward")
		expectHop(t, "carrier", v.Carrier, Hop{Op: "Distributed.send.0.forward", FromRanks: []int{1}, ToRanks: []int{0}})
		expectHop(t, "spread[0] (senderless; canonical order is by op)", &v.Spread[0], Hop{Op: "Distributed.recv.0.forward", FromRanks: []int{}, ToRanks: []int{1}})
	})
	t.Run("weights from the previous update", func(t *testing.T) {
		emb := E("Functional.embedding.0.forward", fwd(in(`{"type": "torch.Tensor", "dtype": "torch.int64", "shape": [4], "Max": 9, "Min": 0, "Mean": null, "Norm": null, "requires_grad": false}`, TG(nan, nan)), T(nan, nan)))
		v := analyse(t, oneStep(map[int][]string{0: {emb}, 1: {emb}}), Options{})
		o := origin(t, v)
		expectInts(t, "origin.ranks", o.Ranks, []int{0, 1})
		expect(t, "origin.op", o.Op, "Functional.embedding.0.forward")
		expect(t, "origin.captured", o.Captured, false)
		expect(t, "origin.stage", o.Stage, "optimizer")
		expect(t, "origin.phase", o.Phase, "optimizer")
		expect(t, "origin.step", o.Step, 0)
		expect(t, "row stage (the entry's own)", role(t, v, 0, 0).Stage, "forward")
	})
	t.Run("weights rule needs two sources at the same forward entry", func(t *testing.T) {
		emb := E("Functional.embedding.0.forward", fwd(in(ok, TG(nan, nan)), T(nan, nan)))
		v := analyse(t, oneStep(map[int][]string{0: {emb}}), Options{})
		expect(t, "origin.stage", origin(t, v).Stage, "forward")
	})
}

// Unread and damaged rank files (README section 5).
func TestUnreadAndDamaged(t *testing.T) {
	recv := E("Distributed.all_reduce.0.forward", allReduce(ok, T(nan, nan), ""))
	full := dumpText(t, []string{
		E("Torch.log.0.forward", fwd(in(ok), T(nan, nan))),
		E("Distributed.all_reduce.0.forward", allReduce(T(nan, nan), T(nan, nan), "")),
	})
	str := func(s string) *string { return &s }
	cutAt := func(marker string, extra int) *string {
		i := strings.Index(full, marker)
		if i < 0 {
			t.Fatalf("marker %q not in the dump", marker)
		}
		return str(full[:i+extra])
	}
	unread := []struct {
		name string
		f    rankFiles
	}{
		{"no dump.json", rankFiles{noDump: true}},
		{"empty data", rankFiles{raw: str(pyJSON(t, `{"task": "statistics", "level": "L1", "data": {}}`))}},
		{"no data member", rankFiles{raw: str(pyJSON(t, `{"task": "statistics", "level": "L1"}`))}},
		{"cut before the first entry", rankFiles{raw: cutAt(`"data": {`, len(`"data": {`)+2)}},
		{"cut inside the first entry", rankFiles{raw: cutAt(`"Torch.log.0.forward"`, 40)}},
	}
	for _, c := range unread {
		t.Run("unread: "+c.name, func(t *testing.T) {
			r := oneStep(map[int][]string{0: {recv}})
			r[0][1] = c.f
			o := origin(t, analyse(t, r, Options{}))
			expect(t, "origin.unread", o.Unread, true)
			expectInts(t, "origin.ranks", o.Ranks, []int{1})
		})
	}
	t.Run("damaged after some entries: they are used", func(t *testing.T) {
		r := oneStep(map[int][]string{0: {recv}})
		r[0][1] = rankFiles{raw: cutAt(`"Distributed.all_reduce.0.forward"`, 60)}
		v := analyse(t, r, Options{})
		o := origin(t, v)
		expectInts(t, "origin.ranks", o.Ranks, []int{1})
		expect(t, "origin.op", o.Op, "Torch.log.0.forward")
		expect(t, "origin.captured", o.Captured, true)
		expect(t, "origin.confidence", o.Confidence, "medium")
		// rank 1's side of the all_reduce is past the damage: the source
		// whose side was not read counts as its sender
		if c := v.Carrier; c == nil || !slices.Equal(c.FromRanks, []int{1}) || !slices.Equal(c.ToRanks, []int{0}) {
			t.Errorf("carrier: got %+v, want the all_reduce from rank 1 to rank 0", v.Carrier)
		}
	})
	t.Run("dump.json that is not a regular file", func(t *testing.T) {
		r := oneStep(map[int][]string{0: {recv}})
		r[0][1] = rankFiles{noDump: true, stack: "{}"}
		dir := r.write(t)
		if err := mkdir(dir + "/step0/rank1/dump.json"); err != nil {
			t.Fatal(err)
		}
		v, err := Analyse(dir, Options{})
		if err != nil {
			t.Fatal(err)
		}
		expect(t, "origin.unread", origin(t, v).Unread, true)
	})
}
