package trace

import (
	"strconv"
	"strings"
)

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
// it sets one (launcherJob), else the zero Job.
func NodeFromEnv(getenv func(string) string) (n Node, job Job) {
	num := func(k string) (int, bool) {
		v, err := strconv.Atoi(strings.TrimSpace(getenv(k)))
		return v, err == nil && v >= 0
	}
	pair := func(launcher, idx, count string) bool {
		i, ok := num(idx)
		if !ok {
			return false
		}
		c, _ := num(count)
		n = Node{Index: i, Count: c, Launcher: launcher}
		return true
	}
	n.Index = -1
	switch {
	case getenv("TORCHELASTIC_RUN_ID") != "" || getenv("GROUP_RANK") != "":
		if lw, _ := num("LOCAL_WORLD_SIZE"); lw <= 1 && pair("torchrun", "GROUP_RANK", "GROUP_WORLD_SIZE") {
			break
		}
		pair("torchrun", "RANK", "WORLD_SIZE")
	case getenv("SLURM_PROCID") != "":
		if !pair("slurm", "SLURM_PROCID", "SLURM_NTASKS") {
			pair("slurm", "SLURM_NODEID", "SLURM_NNODES")
		}
	case getenv("JOB_COMPLETION_INDEX") != "":
		pair("kubernetes", "JOB_COMPLETION_INDEX", "")
	case getenv("OMPI_COMM_WORLD_RANK") != "":
		pair("mpi", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE")
	case getenv("PMI_RANK") != "":
		pair("mpi", "PMI_RANK", "PMI_SIZE")
	case getenv("PMIX_RANK") != "":
		pair("mpi", "PMIX_RANK", "")
	}
	return n, launcherJob(n.Launcher, getenv)
}
