// Package monitor reads the output of msprobe's lightweight training
// monitor and says where a NaN or Inf first appeared: the step, the stage
// (forward, backward, optimizer), the rank and the module or parameter.
//
// Two generations are read. TrainerMon (v1) writes one folder per rank,
// $MONITOR_OUTPUT_DIR/<%b%d_%H-%M-%S>-rank<r>-<id8>/, holding
// actv_<s>-<e>.csv (forward module inputs and outputs), actv_grad_…
// (backward), grad_unreduced_… and grad_reduced_… (weight gradients before
// and after the data-parallel reduction), exp_avg_…, exp_avg_sq_… (optimizer
// moments; early versions spell it efxp_avg_sq) and param_origin_…,
// param_updated_… (weights before and after optimizer.step). Its header is
// either the current vpp_stage,name,step[,micro_step],<ops>,shape,dtype or
// the one used before 2025-02, [vpp_stage,]module_name,step,input.<op>…,
// output.<op>… for activations and [vpp_stage,]param_name,step,<ops>
// otherwise. monitor_v2 writes <dir>/rank_<r>/{module,weight_grad,
// optimizer,param}_step<s>-<e>.csv with a scope column. Other files
// (other_, *_hook_, stack_info.csv, cc_) are ignored.
//
// Read streams every file once with a small fixed buffer and keeps, per
// rank and kind of record, only the steps recorded, counts, and the first
// anomalous row (and, given Options.Ahead, each row name's max and min at
// its last few steps while the rank is read, for a warning before the
// NaN: Run.Climbs); a second pass rereads only the files of the first
// anomalous step to compare tensor-parallel partners. Damaged lines,
// unknown columns and unreadable files become Warnings. When Read's
// context is cancelled, every file stops at its next read of the disk and
// Read returns the context's error.
//
// A row is anomalous when its nans count is positive or one of min, max,
// mean and norm is not finite (see judge for the exceptions: the monitor's
// nan placeholders for non-tensor values, empty tensors, and an infinite
// norm alone, which is kept but marked weak). Findings is plain data with
// JSON tags, meant to be embedded in a verdict.
//
// It imports internal/climb (a series followed for a warning before the
// NaN), nonfinite (the spellings of non-finite values), internal/safeio
// (it opens only regular files) and the standard
// library.
//
// May import: internal/climb, internal/nonfinite, internal/safeio.
package monitor
