package trace

import (
	"crypto/rand"
	"encoding/hex"
	"strings"
)

// Job is one launch of summarize over the nodes of a run: the marks a node
// leaves in the shared folder belong to it, and only the nodes of the same
// job follow them. A summary's header records it.
type Job struct {
	// ID names the launch.
	ID string `json:"id"`
	// From says where the id comes from: "flag" (--job-id), the launcher
	// that set it ("slurm", "torchrun", "mpi"), or "made": this process
	// made it when it started, and no other node shares it.
	From string `json:"from"`
}

// JobMade is the From of an id a process made for itself.
const JobMade = "made"

// Shared reports whether every node of the launch has the same id: one
// given by --job-id or by the launcher. Only then can a node tell a mark
// of its own job from one an earlier job left in the same folder.
func (j Job) Shared() bool { return j.ID != "" && j.From != JobMade }

// MadeJob is a job id of this process's own, for a launch without a shared
// one: random, so that it names no other launch.
func MadeJob() Job {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return Job{From: JobMade}
	}
	return Job{ID: hex.EncodeToString(b[:]), From: JobMade}
}

// launcherJob is the job id the launcher sets, by launcher ("" none):
//
//	slurm     SLURM_JOB_ID (SLURM_JOBID in older releases)
//	torchrun  TORCHELASTIC_RUN_ID (--rdzv-id), unless it is "none", its default
//	mpi       PMIX_NAMESPACE (Open MPI 5, PRRTE, any PMIx launcher), else
//	          OMPI_MCA_orte_ess_jobid (Open MPI 4) or OMPI_MCA_ess_base_jobid
//
// A Kubernetes Indexed Job sets none in the environment: its uid reaches the
// pod through the downward API, and --job-id passes it on.
func launcherJob(launcher string, getenv func(string) string) Job {
	var names []string
	switch launcher {
	case "slurm":
		names = []string{"SLURM_JOB_ID", "SLURM_JOBID"}
	case "torchrun":
		names = []string{"TORCHELASTIC_RUN_ID"}
	case "mpi":
		names = []string{"PMIX_NAMESPACE", "OMPI_MCA_orte_ess_jobid", "OMPI_MCA_ess_base_jobid"}
	}
	for _, k := range names {
		if id := strings.TrimSpace(getenv(k)); id != "" && id != "none" {
			return Job{ID: id, From: launcher}
		}
	}
	return Job{}
}
