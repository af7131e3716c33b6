// Package sources reads what a run leaves beside its dump: the training
// logs (package trainlog) and the msprobe monitor output (package
// monitor). Inputs names them and their options; Start reads them once,
// each under the caller's context, and Said.Combine joins what they say
// with a verdict (package evidence), their warnings included, and adds
// what they warn of before the NaN to the verdict's (package ahead). LogFollower
// and MonitorFollower read them again as they grow, for a watch, and
// return every read that failed instead of keeping it to themselves.
//
// It imports internal/ahead, internal/evidence, internal/monitor,
// internal/plan, internal/trainlog and verdict.
//
// May import: internal/ahead, internal/evidence, internal/monitor, internal/plan,
// internal/trainlog, verdict.
package sources
