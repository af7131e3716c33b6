// Package launchtest runs nanhunt summarize under the real job launchers
// that start one process per node, and holds the verdict that nanhunt trace
// joins from their summaries to the one the same rank folders give in one
// place.
//
// Each test builds the nanhunt binary, generates catalogued runs with
// nanhunt synth (tie-pipeline-carrier and sendrecv-carrier), and splits
// their rank folders over node folders: rank r goes to node r mod N, with
// the stepN/rankM layout and the dump.json, stack.json and construct.json
// of each rank folder. The launcher then starts one
// "nanhunt summarize DIR/nodes/node{node}/dump -o DIR/sums/" per node, so
// the node index, and with it the folder read and the summary-node<N>.jsonl
// written, comes from the environment the launcher sets. The test checks
// that every node wrote its summary, that the header line of each names the
// launcher, the node's index and the node count, the launcher's job id
// (Slurm's SLURM_JOB_ID; torchrun's --rdzv_id, which the test gives) and
// the run (the DUMP template after that job id, or the --run given), and
// that
// "nanhunt trace DIR/sums" and "nanhunt trace DIR/dump" (both exit status
// 1, an anomaly) print the same JSON verdict, field by field, once the
// absolute roots of the folders are replaced by one placeholder; the
// verdict's origin must be the one the generator injected.
//
// For the first scenario, the shared folder already holds the hidden mark
// of an earlier job of the same run (the same --run; its summary deleted,
// its mark left), which names step 1: a node that followed it would stop
// before the scenario's NaN at step 2, and the joined verdict would differ.
// The test checks that the nodes removed that mark and left only their
// own job's.
//
// TestTorchrunSummarize runs Debian's torchrun (python3-torch 1.13 for
// /usr/bin/python3) with --nnodes 1 --nproc_per_node 3 --no_python. That
// torchrun crashes under Python 3.11 before it starts a worker, so the test
// starts it through testdata/torchrun.py, which fixes the crash in memory
// and leaves the installed package alone. The rendezvous port is a free
// one, the agent polls its workers every 0.1 s instead of 5 s, and its logs
// and temporary files stay in the test's folder.
//
// It also starts torchrun with a --rdzv_id holding a space, which torchrun
// passes on as TORCHELASTIC_RUN_ID: every node must refuse it (exit status
// 2), naming the variable and its value, and write nothing.
//
// TestSlurmSummarize runs "srun -N1 -n2" on a one-host Slurm cluster that
// the test starts and stops itself: its own munged (a new key and socket,
// checked with munge -n | unmunge), then slurmctld and slurmd in the
// foreground, with a generated slurm.conf whose state, spool, pid and log
// files, ports (free ones) and munge socket are the test's own, so it
// touches no Slurm or munge set up on the machine. SlurmUser is the user
// running the test (root in CI). It polls until sinfo shows the node idle
// and a probe srun runs its two tasks, within a deadline, and stops the
// daemons by their pid files when it ends, having cancelled any job left.
//
// No process the tests start outlives them: each carries a mark in its
// environment, which the processes it starts inherit (the launchers'
// workers, slurmstepd and its tasks). After each launch and after the
// daemons stop, a marked process still running fails the test and is
// killed. The daemons and launchers get a parent death signal, and a
// watchdog (the test binary started again by TestMain, in its own process
// group) kills every marked process when the test binary ends without its
// cleanup: a panic, a -timeout, a kill.
//
// A missing tool fails the test and names it: torch for /usr/bin/python3
// (Debian's python3-torch) and srun, sinfo, squeue, scancel, slurmctld,
// slurmd, munged, munge and unmunge (Debian's slurm-wlm and munge), all of
// which .ci/run installs when they are missing. The tests are Linux only.
// It imports no package of nanhunt: it runs the binary.
//
// May import: the standard library only.
package launchtest
