package trace

import (
	"fmt"
	"strconv"
	"strings"
)

// MaxNodes bounds the number of summarising processes of a run, and so a
// node's index and the launcher's count: a summary naming more is damage,
// and no job comes near it (it is the bound of the ranks filled in, README
// "How it decides", 9).
const MaxNodes = maxFilledRank

// LauncherError is a variable of the launcher's environment that does not
// say what it should: a number, or a job id nanhunt can write.
type LauncherError struct {
	Var, Value string
	Want       string // what the variable should hold
}

func (e *LauncherError) Error() string {
	return fmt.Sprintf("%s=%q in the environment: %s; the launcher did not set it so, or something else did: fix or unset it (--node-index, --nodes and --job-id say the same without it)",
		e.Var, e.Value, e.Want)
}

// NodeFromEnv is the summarising process's place among its siblings, as
// the launcher that started them says it (getenv is os.Getenv):
//
//	torchrun    GROUP_RANK of GROUP_WORLD_SIZE with one process per node,
//	            else RANK of WORLD_SIZE
//	Slurm       SLURM_PROCID of SLURM_NTASKS (SLURM_NODEID of SLURM_NNODES)
//	Kubernetes  JOB_COMPLETION_INDEX (an Indexed Job; the count is not set)
//	MPI         OMPI_COMM_WORLD_RANK of OMPI_COMM_WORLD_SIZE, PMI_RANK of
//	            PMI_SIZE, PMIX_RANK
//
// Index is -1 when no launcher is found. Job is the launcher's job id when
// it sets one (launcherJob), else the zero Job. A variable it reads that
// does not parse (an index that is not a number below MaxNodes, a count
// that is not one from 1 to MaxNodes, an index not below its count, a job
// id outside CheckJobID's characters) is a *LauncherError: a place that
// cannot be told is never guessed.
func NodeFromEnv(getenv func(string) string) (Node, Job, error) {
	e := &envReader{getenv: getenv}
	n := Node{Index: -1}
	switch {
	case getenv("TORCHELASTIC_RUN_ID") != "" || getenv("GROUP_RANK") != "":
		if lw := e.count("LOCAL_WORLD_SIZE"); lw <= 1 && e.pair(&n, "torchrun", "GROUP_RANK", "GROUP_WORLD_SIZE") {
			break
		}
		e.pair(&n, "torchrun", "RANK", "WORLD_SIZE")
	case getenv("SLURM_PROCID") != "":
		if !e.pair(&n, "slurm", "SLURM_PROCID", "SLURM_NTASKS") {
			e.pair(&n, "slurm", "SLURM_NODEID", "SLURM_NNODES")
		}
	case getenv("JOB_COMPLETION_INDEX") != "":
		e.pair(&n, "kubernetes", "JOB_COMPLETION_INDEX", "")
	case getenv("OMPI_COMM_WORLD_RANK") != "":
		e.pair(&n, "mpi", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE")
	case getenv("PMI_RANK") != "":
		e.pair(&n, "mpi", "PMI_RANK", "PMI_SIZE")
	case getenv("PMIX_RANK") != "":
		e.pair(&n, "mpi", "PMIX_RANK", "")
	}
	if e.err != nil {
		return Node{Index: -1}, Job{}, e.err
	}
	job, err := launcherJob(n.Launcher, getenv)
	if err != nil {
		return Node{Index: -1}, Job{}, err
	}
	return n, job, nil
}

// envReader reads the launcher's variables, keeping the first that does
// not parse.
type envReader struct {
	getenv func(string) string
	err    error
}

// fail keeps the first variable that does not parse.
func (e *envReader) fail(k, v, want string) {
	if e.err == nil {
		e.err = &LauncherError{Var: k, Value: v, Want: want}
	}
}

// number reads k as a decimal number of at most nine digits (spaces
// around it allowed); ok is false when k is unset or does not parse.
func (e *envReader) number(k, want string) (int, bool) {
	raw := e.getenv(k)
	v := strings.TrimSpace(raw)
	if v == "" {
		return 0, false
	}
	if len(v) > 9 || strings.Trim(v, "0123456789") != "" {
		e.fail(k, raw, want)
		return 0, false
	}
	n, _ := strconv.Atoi(v)
	return n, true
}

// count reads a count of processes: 1 to MaxNodes; 0 when unset.
func (e *envReader) count(k string) int {
	want := fmt.Sprintf("want a count from 1 to %d", MaxNodes)
	c, ok := e.number(k, want)
	if ok && (c < 1 || c > MaxNodes) {
		e.fail(k, e.getenv(k), want)
		return 0
	}
	return c
}

// pair sets n from an index variable and its count (count "" none) when
// the index is set and parses; the index must be below the count.
func (e *envReader) pair(n *Node, launcher, idx, count string) bool {
	i, ok := e.number(idx, fmt.Sprintf("want a number from 0 to %d", MaxNodes-1))
	if !ok {
		return false
	}
	c := 0
	if count != "" {
		c = e.count(count)
	}
	switch {
	case i >= MaxNodes:
		e.fail(idx, e.getenv(idx), fmt.Sprintf("want a number from 0 to %d", MaxNodes-1))
		return false
	case c > 0 && i >= c:
		e.fail(idx, e.getenv(idx), fmt.Sprintf("want a number below %s=%d", count, c))
		return false
	}
	*n = Node{Index: i, Count: c, Launcher: launcher}
	return true
}
