// Package reference is the slow reference analyser: an independent,
// deliberately simple implementation of the rules of the README section
// "How it decides" (sections 1-9 and 12), used as a test oracle. A differential
// test holds the fast path (package trace) to its verdicts.
//
// It reads every file whole (internal/jsonoracle decodes dump.json,
// stack.json and construct.json; a dump.json that does not decode is read
// member by member up to the damage), walks the steps in order and applies
// the rules with no search, window or cap. It is written from the README and
// the on-disk format reference only, never from the fast path's code.
//
// Imports: the standard library and internal/jsonoracle; FromTrace imports
// the verdict package for the fast path's Verdict type only. The tests also
// use trace, synth, internal/fixturedir, internal/realruns and
// internal/tinylimits (the fast path is compared with its normal limits and
// with every limit held to a few). The hand-written dumps and their
// expected verdicts are files, run by internal/cases through this package,
// the fast path and the tiny-limits mode.
//
// Files: values.go (statistics and leaves), names.go (entry names, globs),
// rules.go (the rule set), collectives.go (slots, groups, pairing keys),
// entries.go, phases.go, rank.go (first sign, root, first NaN); across the
// ranks of a step, one file per group of the README's rules: step.go (the
// step and the order of the rules), hops.go (6.1, participants),
// p2pstage.go (6, the stage of a receive), order.go
// (6.2-6.4: happened-before, late candidates, sources), origin.go (6.5,
// 6.6, 6.8, the rows' roles), carrier.go (6.7, and README 7's carrier in
// the checked step); analyse.go (across steps), ahead.go (12, heading for
// overflow), confidence.go, layout.go,
// files.go, verdict.go, diff.go, fromtrace.go.
//
// # Readings of the README
//
// Where the README is ambiguous or silent, the reference takes the most
// literal reading; each question and the choice made:
//
// Values (section 1)
//
//  1. Numeric strings: only JSON number syntax with an optional sign
//     (`"0.001"`, `"-1e5"`, `"1e309"` is +inf); no hex, no spaces, no
//     underscores. "+nan" and "-nan" are NaN.
//  2. Bool statistics (`"Max": true`) are "anything else": unknown.
//  3. A non-tensor argument holds its value when the value is a number, a
//     bare token or a string spelling of one, except for `"type": "str"`
//     (a string argument "nan" is not a number). Bare numbers anywhere in
//     an argument hold their value; bare strings are unknown.
//  4. What is a tensor: an object with Max or Min in any case (one of them
//     suffices). An object with a "type" and a "value" is a non-tensor
//     argument; one with a "type" and neither is opaque (a ProcessGroup, a
//     stat-less tensor). Other objects (P2POp, dicts) and arrays are walked
//     into.
//
// Rule set (section 2)
//
//  5. The rules match the op name without counter and direction, so they
//     apply to backward entries too: slot 0 of `*.copy_` is `input[0]` of
//     `Tensor.copy_.0.backward`, and a mask op's backward drops -inf from
//     its outputs. The skill's `{prefix}.{api}_{N}_{M}` names (M 0 or 1)
//     read as `{prefix}.{api}`; a name of no known form is its own op, and
//     a collective's api is its op after "Distributed." or
//     "MintDistributed.".
//  6. "Receive slots on the input side are ignored": read as receive slots
//     that are not also a send slot on that rank. all_reduce and reduce
//     slot 0 is both and is judged on the input side; broadcast's slot 0
//     is judged on the input side on the root only.
//
// Collectives (section 3)
//
//  7. Only the send slots (input side) and receive slots (output side) of
//     a collective are judged; its other arguments and outputs never make a
//     sign, and a collective is never a birth or inherited.
//  8. A broadcast or scatter whose root cannot be read is taken as not
//     the root on that rank (it sends nothing).
//  9. p2p messages are counted per (sender, receiver) over send, isend and
//     the P2POps of batch_isend_irecv together, whatever their group;
//     `"group": null` changes only group collectives to entry-name pairing.
//  10. The group is keyword "group" or a positional ProcessGroup object; a
//     group object with no group_id, group_ranks or MindSpore name is
//     paired like `"group": null`; "process_group_id" is not a group key
//     (it is per process).
//  11. Participants: group_ranks when listed; all dumped ranks of the step
//     (rank folders present, after the ranks option) for the default group
//     and for entry-name pairing; the ranks that recorded the instance for
//     a group known only by id or name; for a point-to-point call whose
//     peer the dump does not name, every rank of the job. group_dst and
//     group_src go through group_ranks when listed, else are taken as
//     global ranks.
//
// Phases (section 4)
//
//  12. Backward entries: any name ending in ".backward"; `….backward.N` and
//     `….parameters_grad.N` only with the Module or Cell prefix (the two
//     module prefixes msprobe writes); with any other prefix the name is
//     of no known form.
//  13. Rule 2 looks at the direct parent only, at any level (construct.json
//     is {} at L1 anyway).
//  14. Rule 3: an optimizer frame wins over a backward frame, which wins
//     over a checkpoint frame (a recompute runs in the backward), whatever
//     the frames' order. "A file under a folder named optim" is a
//     directory component of the path.
//  15. Rule 6 compares the op (name without counter and direction) with
//     the ops strictly before B₁. Consequence: a gradient all_reduce run
//     between B₁ and B₂ (a hook per parameter) would be forward whenever
//     the forward also ran an all_reduce (tensor parallel, a statistics
//     all_reduce): the rule does not single out collectives.
//  16. Rule 7 counts only entries after B₂ that rule 2 or 3 placed. With
//     no collective after B₂ the optimizer starts right after B₂; when the
//     last collective is the last entry, every unplaced entry after B₂ is
//     gradient reduction.
//
// Per rank (section 5)
//
//  17. -inf "in a module's parameters": values under the entry's
//     `parameters` member. "After B₂" is by position, as the README says
//     severity is: a file without backward entries has none, and a
//     forward-named call between B₁ and B₂ (a kernel a backward calls) is
//     not after it, whatever phase rule 5 gives it.
//  18. Sent is checked before received (a collective that did both is
//     sent); the kind of a sent first sign is what it sent.
//  19. nan_check: an entry with `is_nan` 1 (or true) and no severe value is
//     a flagged sign, collectives included; kind "overflow"; a flagged rank
//     counts as a birth everywhere ("has a birth (or is flagged)").
//  20. Promotion: "non-finite input" is after the rule set, whatever its
//     severity; "its only non-finite input is -inf" needs a -inf input (a
//     first sign without non-finite input is not promoted); "after the
//     last legitimate -inf source" means after the last such source
//     before the first sign. A promoted root makes an
//     inherited rank a birth, but happened-before still uses the first
//     sign's position.
//  21. First NaN: a non-collective whose output holds NaN after the rule
//     set; a collective whose receive slots hold NaN. In the next dumped
//     step the search starts at its first entry.
//  22. A dump.json cut inside its first entry has no entry before the
//     damage: unread, not damaged. One that decodes but whose top level or
//     data is not an object is unread. A second "data" member is damage
//     after the entries of the first (README 5 says so), also after
//     "data": null (no entry before it: unread). An entry name data holds
//     twice is two entries, each read where it lies (README 5).
//
// Across ranks (section 6)
//
//  23. "Damaged before its own side of the instance": a damaged rank whose
//     entries read hold no side of that instance.
//  24. Happened-before is direct only (no transitive closure). Barriers and
//     `*_object*` collectives are clocks too. Entry-name keys have one
//     instance.
//  25. Late flagged ranks are later births, like late births.
//  26. Unread origin: tie is false; the main rank is the lowest receiver of
//     the hops without a sender. A collective origin takes op, kind and
//     stage from its lowest receiver's first sign.
//  27. Carrier: "the lowest source rank" is the lowest source rank that
//     sent in some hop. Senders are judged on read sides only, so a hop
//     whose senders are all unseen has no sender and cannot be the carrier
//     (synth scenario damage-truncated-source: its truth names the
//     all_reduce from the cut source rank; the reference names none and
//     lists the hop in spread with no sender). to_ranks are all the hop's
//     receivers.
//  28. A spread hop's op: carrier.op for the carrier; else the entry on the
//     lowest sender; else, without sender, on the lowest receiver.
//  29. Rule 8: "the first sign's non-finite input is a module's
//     parameters" means every non-finite input of the main rank's root is
//     under `parameters`; the second branch needs two or more source ranks
//     whose roots are the same forward entry name with every non-finite
//     input requiring grad. It changes the origin's stage and phase only,
//     not the rows of steps[].
//  30. Rows: received and inherited ranks show their first sign, sources
//     and later births their root.
//
// Across steps (section 7)
//
//  31. The next dumped step is the next step selected (steps option). An
//     anomalous last step has no next step: it is the origin, with no
//     checked step. After a recovery the next step is clean and the scan
//     goes on after it.
//  32. s′'s carrier: among s′'s hops that are not collective origins and
//     reach a rank with no first sign at s, chosen with the rule of 6.7
//     and s′'s own sources; it is added to spread (carrier included), no
//     other hop of s′ is.
//  33. scanned.not_scanned is the steps whose status is not_scanned, not
//     the checked step: the README's JSON example lists the checked step 6
//     in "not_scanned": [6, 7] while its text says only step 7 was not
//     read.
//  34. Steps with no rank folder, or not selected, are not listed.
//
// Confidence (section 8)
//
//  35. "Low when the main rank's file ends before its root" cannot apply:
//     a root is always among the entries read. Damage lowers to medium.
//  36. "Not dumped ranks in the step": ranks with a folder in another
//     selected step, or listed in a group_ranks of the step, but without a
//     folder in it (so a ranks option that cuts a group lowers it).
//  37. "Most calls stat-less": more than half of the main rank's entries
//     have tensors and none with Max or Min. "A promoted -inf": the root
//     of any origin rank was promoted.
//
// Layout (format reference)
//
//  38. A lone rank folder (or dump.json) is the step of its parent's
//     step<digits> name, else 0, and rank<digits>, else 0. A proc<digits>
//     folder is rank 0 only when it is the step's only rank-like folder.
//     MindSpore's graph/ and pynative/ levels are not looked for.
//
// May import: internal/jsonoracle, verdict.
package reference
