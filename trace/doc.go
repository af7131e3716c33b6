// Package trace finds where a NaN or Inf was born in a multi-rank training
// run dumped by msprobe, and how it reached the other ranks.
//
// Run reads the steps in order, every rank of a step in parallel, and stops
// at the first step that holds an anomaly. On each rank it walks the entries
// in execution order and looks for the first call whose output holds a kind
// of non-finite value (NaN, or ±Inf) that none of its inputs holds. Across
// ranks it pairs the collectives (by process group, api and occurrence, or
// by peer for point-to-point calls) to tell the rank(s) where the value was
// born from the ranks that only received it, and which collective carried
// it. The result is a Verdict: plain data, stable as JSON
// (schema "nanhunt/verdict/v1").
//
// What is deliberately not an origin, each listed in the verdict with its
// reason: uninitialised memory from creation ops (empty, empty_like, ...),
// -inf written on purpose to build attention masks (and the -inf that flows
// on from them), receive buffers of collectives, which hold whatever was
// there before the call, and anything a user rule (Options.Rules) excludes.
// Casts are never excluded: a .half() that turns 1e5 into Inf is a real
// origin.
package trace
