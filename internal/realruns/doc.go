// Package realruns gives tests the real msprobe dumps kept in
// testdata/realruns: small 4-rank PyTorch training runs (CPU, gloo) with a
// fault that comes from the data, dumped by the real msprobe and packed one
// scenario per archive (<scenario>.tar.gz), with the ground truth next to it
// (<scenario>.truth.json). testdata/realruns/README.md says how they were made.
//
// Dir extracts an archive once per test process and returns the scenario
// folder (the one holding its levels L0/, L1/ or mix/, train-log/ and, where
// TrainerMon ran too, monitor/); Truth reads the ground truth, with the
// fields only some scenarios have in Extras; Scenarios lists the archives
// present; Cleanup, for TestMain, removes the extractions. The data is part of the repository, so a missing or
// damaged archive fails the test instead of skipping it.
//
// It imports only the standard library.
//
// May import: the standard library only.
package realruns
