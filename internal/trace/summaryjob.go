package trace

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
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

// SafeName is s as a part of a file name: every byte but the letters and
// digits of ASCII, '.', '_' and '-' becomes '_', so that a host name
// holding a path separator or a control character names no other folder
// and prints as it is.
func SafeName(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			b[i] = '_'
		}
	}
	return string(b)
}

// maxJobID bounds a job id: the launchers' are a few dozen characters.
const maxJobID = 256

// CheckJobID says what is wrong with a job id, nil when nothing is: one to
// 256 characters, letters and digits of ASCII and . _ - : @ + = (Slurm's
// numbers, a torchrun --rdzv-id, a PMIx namespace such as
// "prterun-host-4242@1", a Kubernetes uid). A job id names the marks and
// reaches messages: no path separator, space or control character is
// taken from the environment.
func CheckJobID(id string) error {
	if id == "" || len(id) > maxJobID {
		return fmt.Errorf("want a job id of 1 to %d characters", maxJobID)
	}
	for i := 0; i < len(id); i++ {
		if !jobIDByte(id[i]) {
			return fmt.Errorf("want a job id of letters, digits and . _ - : @ + =, not %q", id[i:i+1])
		}
	}
	return nil
}

// jobIDByte reports whether c may be in a job id.
func jobIDByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("._-:@+=", c) >= 0
}

// launcherJob is the job id the launcher sets, by launcher ("" none):
//
//	slurm     SLURM_JOB_ID (SLURM_JOBID in older releases)
//	torchrun  TORCHELASTIC_RUN_ID (--rdzv-id), unless it is "none", its default
//	mpi       PMIX_NAMESPACE (Open MPI 5, PRRTE, any PMIx launcher), else
//	          OMPI_MCA_orte_ess_jobid (Open MPI 4) or OMPI_MCA_ess_base_jobid
//
// A Kubernetes Indexed Job sets none in the environment: its uid reaches the
// pod through the downward API, and --job-id passes it on. An id that
// CheckJobID refuses is a *LauncherError.
func launcherJob(launcher string, getenv func(string) string) (Job, error) {
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
		raw := getenv(k)
		id := strings.TrimSpace(raw)
		if id == "" || id == "none" {
			continue
		}
		if err := CheckJobID(id); err != nil {
			return Job{}, &LauncherError{Var: k, Value: raw, Want: err.Error()}
		}
		return Job{ID: id, From: launcher}, nil
	}
	return Job{}, nil
}
