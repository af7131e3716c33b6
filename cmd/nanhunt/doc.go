// Command nanhunt finds where a NaN or Inf was born in a multi-rank training
// run dumped by msprobe (see the README). It only wires the libraries
// together: flags in, trace / evidence / plan / repro / export / synth
// calls, the verdict out through internal/report and internal/htmlreport,
// and every output checked and written by internal/outguard.
package main
