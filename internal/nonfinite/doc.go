// Package nonfinite is the one model of non-finite values that every part of
// nanhunt shares: the dump reader, the training-log and monitor readers, the
// export and the reports.
//
// A [Class] is a set of the three non-finite values (NaN, +Inf, -Inf).
// [Parse] reads every spelling the inputs use for them (Python's nan, inf,
// -inf, Infinity, -Infinity in any case and with an optional sign, and
// -nan); [Class.String] writes the one spelling of the verdict ("nan",
// "+inf", "-inf", "nan,-inf", "finite"), and [Class.Kind] the verdict's
// word for what a call made: "nan" when NaN is among the values, "inf"
// otherwise. [Number] is a statistic that may be non-finite, as the verdict
// writes it in JSON.
//
// It imports only the standard library.
//
// May import: the standard library only.
package nonfinite
