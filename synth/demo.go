package synth

// Demo is the built-in example of nanhunt demo, modelled on a real case: a
// 32-rank mixture-of-experts run (EP groups of 8 consecutive ranks, dense
// gradients all-reduced over all 32 ranks, expert gradients over the 4
// replicas of each expert), dumped at level L1 around the failure (steps
// 4-8), stack v2, fused (unhooked) Adam as in Megatron.
//
// At step 6 the custom attention kernel of layer 0,
// moe_ext.kernels.fused_attention (registered with register_custom_api),
// returns NaN in its backward on ranks 3 and 7 at the same time: both
// batches hold a sequence of the maximum length and the kernel corrupts the
// gradient of the last relative-position bucket of rel_bias. Layer 0 is the
// first layer, so no all_to_all runs after it in the backward; the dense
// gradient all_reduce of rel_bias carries the NaN to the other 30 ranks and
// Adam writes it into that bucket everywhere. At step 7 no batch reaches the
// bucket: the kernel's input shows NaN, its output and the loss stay
// finite. At step 8 long sequences come back and the loss is NaN.
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
		Fault:   &Fault{Kind: CustomAttentionBackward, Step: 6, Ranks: []int{3, 7}, Layer: 0},
		Seed:    2024,
		LossLog: true,
	}
}
