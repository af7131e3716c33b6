package trace

import (
	"errors"
	"strings"
	"testing"
)

// A launcher's variable that does not parse is refused, naming the
// variable and its value (quoted, so that a control character prints as
// an escape): the node's place is never guessed, so {node} and the
// summary's header cannot disagree.
func TestNodeFromEnvRefuses(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		want string // in the message
	}{
		{map[string]string{"TORCHELASTIC_RUN_ID": "j", "LOCAL_WORLD_SIZE": "4", "RANK": "../../x"}, `RANK="../../x"`},
		{map[string]string{"TORCHELASTIC_RUN_ID": "j", "LOCAL_WORLD_SIZE": "4", "RANK": "-5"}, `RANK="-5"`},
		{map[string]string{"TORCHELASTIC_RUN_ID": "j", "LOCAL_WORLD_SIZE": "4", "RANK": "1e3"}, `RANK="1e3"`},
		{map[string]string{"TORCHELASTIC_RUN_ID": "j", "LOCAL_WORLD_SIZE": "4", "RANK": "1", "WORLD_SIZE": "0x10"}, `WORLD_SIZE="0x10"`},
		{map[string]string{"TORCHELASTIC_RUN_ID": "j", "LOCAL_WORLD_SIZE": "four", "RANK": "1"}, `LOCAL_WORLD_SIZE="four"`},
		{map[string]string{"GROUP_RANK": "2\x1b[31m", "LOCAL_WORLD_SIZE": "1"}, `GROUP_RANK="2\x1b[31m"`},
		{map[string]string{"GROUP_RANK": "1", "GROUP_WORLD_SIZE": "-1", "LOCAL_WORLD_SIZE": "1"}, `GROUP_WORLD_SIZE="-1"`},
		{map[string]string{"GROUP_RANK": "4", "GROUP_WORLD_SIZE": "4", "LOCAL_WORLD_SIZE": "1"}, `GROUP_RANK="4" in the environment: want a number below GROUP_WORLD_SIZE=4`},
		{map[string]string{"SLURM_PROCID": "x", "SLURM_JOB_ID": "5"}, `SLURM_PROCID="x"`},
		{map[string]string{"SLURM_PROCID": "1", "SLURM_NTASKS": "0"}, `SLURM_NTASKS="0"`},
		{map[string]string{"SLURM_PROCID": "1", "SLURM_NTASKS": "999999999"}, `SLURM_NTASKS="999999999"`},
		{map[string]string{"SLURM_PROCID": "1", "SLURM_NTASKS": "2", "SLURM_JOB_ID": "../../etc"}, `SLURM_JOB_ID="../../etc"`},
		{map[string]string{"SLURM_PROCID": "1", "SLURM_NTASKS": "2", "SLURM_JOB_ID": "7\n"}, ""}, // spaces around a value are no damage
		{map[string]string{"JOB_COMPLETION_INDEX": "1000000000"}, `JOB_COMPLETION_INDEX="1000000000"`},
		{map[string]string{"JOB_COMPLETION_INDEX": "131072"}, `JOB_COMPLETION_INDEX="131072"`},
		{map[string]string{"OMPI_COMM_WORLD_RANK": "+1", "OMPI_COMM_WORLD_SIZE": "2"}, `OMPI_COMM_WORLD_RANK="+1"`},
		{map[string]string{"OMPI_COMM_WORLD_RANK": "1", "OMPI_COMM_WORLD_SIZE": "2", "PMIX_NAMESPACE": "a b"}, `PMIX_NAMESPACE="a b"`},
		{map[string]string{"OMPI_COMM_WORLD_RANK": "1", "OMPI_COMM_WORLD_SIZE": "2", "OMPI_MCA_orte_ess_jobid": "x/y"}, `OMPI_MCA_orte_ess_jobid="x/y"`},
		{map[string]string{"PMI_RANK": "", "PMIX_RANK": "2\x00"}, `PMIX_RANK="2\x00"`},
		{map[string]string{"PMI_RANK": "3", "PMI_SIZE": "three"}, `PMI_SIZE="three"`},
		{map[string]string{"TORCHELASTIC_RUN_ID": "run\x07", "LOCAL_WORLD_SIZE": "1", "GROUP_RANK": "0"}, `TORCHELASTIC_RUN_ID="run\a"`},
	} {
		n, job, err := NodeFromEnv(func(k string) string { return c.env[k] })
		if c.want == "" {
			if err != nil {
				t.Errorf("%q: %v", c.env, err)
			}
			continue
		}
		var le *LauncherError
		if !errors.As(err, &le) || !strings.Contains(err.Error(), c.want) || n.Index != -1 || job != (Job{}) {
			t.Errorf("%q: node %+v job %+v, error %v: want one naming %s", c.env, n, job, err, c.want)
		}
	}
}

func TestCheckJobID(t *testing.T) {
	for id, ok := range map[string]bool{
		"991": true, "prterun-h-4242@1": true, "3f1c2d4e-0b6a-4c1d-9e1f-2a3b4c5d6e7f": true, "launchtest-a_b.c:d+e=f": true,
		"": false, "a/b": false, "..\\x": false, "a b": false, "x\x1b": false, "é": false, strings.Repeat("a", 257): false,
	} {
		if err := CheckJobID(id); (err == nil) != ok {
			t.Errorf("%q: %v, want ok %v", id, err, ok)
		}
	}
	if got := SafeName("a/b\x1b\xff c.d-e_f"); got != "a_b___c.d-e_f" {
		t.Errorf("SafeName: %q", got)
	}
}
