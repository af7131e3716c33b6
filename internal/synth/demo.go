package synth

// Demo is the built-in example of nanhunt demo, modelled on a real case: a
// 32-rank mixture-of-experts run (EP groups of 8 consecutive ranks, dense
// gradients all-reduced over all 32 ranks, expert gradients over the 4
// replicas of each expert), dumped at level L1 around the failure (steps
// 4-8), stack v2, fused (unhooked) Adam as in Megatron.
//
// The attention of every layer is a torch.autograd.Function over two
// kernels registered with register_custom_api: its forward calls
// attn_ext.flash_attention, its backward attn_ext.flash_attention_grad. At
// step 6, on ranks 3 and 7 at the same time, a sample whose every token is
// padding makes the grad kernel of layer 0 write NaN into grad_v from clean
// inputs (the forward kernel clamps the softmax denominator, the grad
// kernel does not). msprobe names the grad kernel
// attn_ext.flash_attention_grad.N.forward, whatever phase calls it: it is
// dumped between the backward entries, with a stack in the Function's
// backward, and its stage is the backward. The dense gradient all_reduce
// carries the NaN to the other 30 ranks, and Adam writes it into the
// weights everywhere.
func Demo() Spec {
	return Spec{
		Name:    "demo-moe-32",
		Ranks:   32,
		Steps:   []int{4, 5, 6, 7, 8},
		Model:   MoE,
		Layers:  4,
		Hidden:  4096,
		EP:      8,
		Experts: 16,
		TopK:    2,
		Batch:   1,
		Seq:     4096,
		Vocab:   151936,
		DType:   "bfloat16",
		Level:   "L1",
		Fault:   &Fault{Kind: GradKernelNaN, Step: 6, Ranks: []int{3, 7}, Layer: 0},
		Seed:    2024,
		LossLog: true,
	}
}
