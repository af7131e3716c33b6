package sim

import (
	mw "github.com/nanhunt/nanhunt/internal/synth/msprobewrite"
)

// The simulated training program: its source files, the call sites of
// its ops and module calls, and the root contexts where code outside any
// module runs. stack.json shows them (msprobewrite builds the stacks).

const (
	modelPy   = "/home/user/job/model.py"
	trainPy   = "/home/user/job/train.py"
	zeroPy    = "/home/user/job/zero.py"
	reducerPy = "/home/user/job/reducer.py"
)

func model(line int, fn, src string) *mw.Site { return mw.NewSite(modelPy, line, fn, src) }
func train(line int, fn, src string) *mw.Site { return mw.NewSite(trainPy, line, fn, src) }
func torchf(file string, line int, fn, src string) *mw.Site {
	return mw.NewSite(mw.TorchDir+"/"+file, line, fn, src)
}

// the torch frame of a Function's backward, which backwardFrame looks for
var frBwdApply = torchf("autograd/function.py", 288, "apply", "return user_fn(self, *args)").Line

// Outer frames of the training script.
var (
	frTrainLoop = train(212, "train", "loss = train_step(model, batch, optimizer)").Line
	frMain      = train(268, "main", "train(args, model, optimizer, loader)").Line
	frModule    = train(272, "<module>", "main()").Line
)

// Root contexts: where code outside any module runs.
var (
	ctxModel = []string{train(143, "train_step", "logits = model(batch)").Line, frTrainLoop, frMain, frModule}
	ctxTrain = []string{frTrainLoop, frMain, frModule}
	ctxSync  = []string{train(147, "train_step", "allreduce_grads(model, dp_group)").Line, frTrainLoop, frMain, frModule}
	ctxClip  = []string{train(149, "train_step", "torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)").Line, frTrainLoop, frMain, frModule}
	ctxAdam  = []string{
		torchf("optim/adam.py", 281, "adam", "func(params,").Line,
		torchf("optim/adam.py", 166, "step", "adam(").Line,
		torchf("optim/optimizer.py", 76, "_use_grad", "ret = func(self, *args, **kwargs)").Line,
		torchf("optim/optimizer.py", 373, "wrapper", "out = func(*args, **kwargs)").Line,
		train(152, "train_step", "optimizer.step()").Line, frTrainLoop, frMain, frModule}
	ctxSGD = []string{
		torchf("optim/sgd.py", 202, "sgd", "func(params,").Line,
		torchf("optim/sgd.py", 151, "step", "sgd(params_with_grad,").Line,
		torchf("optim/optimizer.py", 76, "_use_grad", "ret = func(self, *args, **kwargs)").Line,
		torchf("optim/optimizer.py", 373, "wrapper", "out = func(*args, **kwargs)").Line,
		train(152, "train_step", "optimizer.step()").Line, frTrainLoop, frMain, frModule}
	ctxZeroSync = []string{train(147, "train_step", "reduce_grads(model, dp_group)").Line, frTrainLoop, frMain, frModule}
	ctxZeroStep = []string{mw.NewSite(zeroPy, 61, "step", "self.broadcast_params()").Line,
		train(152, "train_step", "optimizer.step()").Line, frTrainLoop, frMain, frModule}
	ctxReducer = []string{train(147, "train_step", "reducer.reduce(model)").Line, frTrainLoop, frMain, frModule}
	ctxBwdFn   = []string{frBwdApply,
		torchf("autograd/__init__.py", 251, "backward", "Variable._execution_engine.run_backward(  # Calls into the C++ engine to run the backward pass").Line,
		torchf("_tensor.py", 522, "backward", "torch.autograd.backward(").Line,
		train(146, "train_step", "loss.backward()").Line, frTrainLoop, frMain, frModule}
	ctxPipeFwd  = []string{train(140, "train_step", "recv_forward(stage_input, prev_rank)").Line, frTrainLoop, frMain, frModule}
	ctxPipeSend = []string{train(144, "train_step", "send_forward(output, next_rank)").Line, frTrainLoop, frMain, frModule}
	ctxPipeRecv = []string{train(145, "train_step", "grad = recv_backward(output, next_rank)").Line, frTrainLoop, frMain, frModule}
	ctxPipeBack = []string{train(146, "train_step", "send_backward(stage_input, prev_rank)").Line, frTrainLoop, frMain, frModule}
)

// Sites of ops and module calls. Lines are stable per call site.
var (
	// library module internals
	sLinearF    = torchf("nn/modules/linear.py", 114, "forward", "return F.linear(input, self.weight, self.bias)")
	sLayerNormF = torchf("nn/modules/normalization.py", 196, "forward", "return F.layer_norm(")
	sEmbeddingF = torchf("nn/modules/sparse.py", 162, "forward", "return F.embedding(")
	sGeluF      = torchf("nn/modules/activation.py", 682, "forward", "return F.gelu(input, approximate=self.approximate)")

	// Megatron-style parallel layers defined in model.py
	sColLinear  = model(48, "forward", "return F.linear(x, self.weight, self.bias)")
	sRowLinear  = model(60, "forward", "out = F.linear(x, self.weight, self.bias)")
	sRowReduce  = model(61, "forward", "dist.all_reduce(out, op=dist.ReduceOp.SUM, group=self.tp_group)")
	sVocabEmb   = model(72, "forward", "out = F.embedding(ids, self.weight)")
	sVocabRed   = model(74, "forward", "dist.all_reduce(out, op=dist.ReduceOp.SUM, group=self.tp_group)")
	sCopyTPBwd  = model(38, "backward", "dist.all_reduce(grad, op=dist.ReduceOp.SUM, group=ctx.group)")
	sA2AFwdBuf  = model(21, "forward", "out = torch.empty(sum(out_splits), x.size(-1), dtype=x.dtype, device=x.device)")
	sA2AFwd     = model(22, "forward", "dist.all_to_all_single(out, x, out_splits, in_splits, group=group)")
	sA2ABwdBuf  = model(29, "backward", "out = torch.empty(sum(ctx.in_splits), grad.size(-1), dtype=grad.dtype, device=grad.device)")
	sA2ABwd     = model(30, "backward", "dist.all_to_all_single(out, grad.contiguous(), ctx.in_splits, ctx.out_splits, group=ctx.group)")
	sRouterLin  = model(185, "forward", "logits = F.linear(x, self.weight)")
	sRouterSm   = model(186, "forward", "probs = torch.softmax(logits, dim=-1, dtype=torch.float32)")
	sRouterTopk = model(187, "forward", "weights, idx = torch.topk(probs, self.k, dim=-1)")

	// GPT.forward
	sEmbedCall = model(210, "forward", "h = self.embed(tokens)")
	sFeatLog   = model(212, "forward", "feats = torch.log(batch_feats)                 # features are positive")
	sFeatCall  = model(213, "forward", "h = h + self.feat_proj(feats)")
	sMaskFull  = model(215, "forward", "mask = torch.full((s, s), float('-inf'), device=h.device)")
	sMaskTriu  = model(216, "forward", "mask = torch.triu(mask, diagonal=1)")
	sMaskBool  = model(215, "forward", "causal = torch.triu(torch.ones(s, s, dtype=torch.bool, device=h.device), diagonal=1)")
	sMaskPad   = model(217, "forward", "mask = causal | pad_mask[:, None, None, :]")
	sLayerCall = model(220, "forward", "h = layer(h, mask)")
	sLnfCall   = model(221, "forward", "h = self.ln_f(h)")
	sHeadCall  = model(222, "forward", "return self.head(h)")

	// Block.forward
	sDeltaSub    = model(153, "forward", "d = h[:, 1:] - h[:, :-1]")
	sDeltaSq     = model(154, "forward", "step = torch.sqrt((d * d).sum(dim=-1, keepdim=True))")
	sDeltaPad    = model(155, "forward", "h = h + self.delta_proj(F.pad(step, (0, 0, 1, 0)))")
	sLn1Call     = model(157, "forward", "h = h + self.attn(self.ln1(h), mask)")
	sLn2Call     = model(158, "forward", "x = self.ln2(h)")
	sLn2Mask     = model(158, "forward", "x = self.ln2(h) * token_mask[..., None]")
	sMlpCall     = model(159, "forward", "y = self.mlp(x)")
	sMoeCall     = model(159, "forward", "y = self.moe(x)")
	sGateExp     = model(160, "forward", "g = torch.exp(self.gate(x))")
	sGateNorm    = model(161, "forward", "g = g / g.sum(dim=-1, keepdim=True)")
	sGateMul     = model(162, "forward", "y = y * g[..., :1]")
	sResid2      = model(163, "forward", "return h + y")
	sAdapterCall = model(164, "forward", "y = y + self.adapter(x) * domain_mask[..., None]")

	// Attention.forward
	sQkvCall   = model(92, "forward", "q, k, v = self.qkv(x).chunk(3, dim=-1)")
	sHeads     = model(93, "forward", "q, k, v = (t.view(b, s, self.nh, self.hd).transpose(1, 2) for t in (q, k, v))")
	sScores    = model(95, "forward", "att = torch.matmul(q, k.transpose(-2, -1)) * self.scale")
	sMaskFill  = model(96, "forward", "att = att.masked_fill(mask, float('-inf'))")
	sMaskAdd   = model(96, "forward", "att = att + mask")
	sSoftmax   = model(97, "forward", "att = F.softmax(att, dim=-1)")
	sAttnV     = model(98, "forward", "y = torch.matmul(att, v)")
	sMerge     = model(99, "forward", "y = y.transpose(1, 2).reshape(b, s, -1)")
	sCustomAtt = model(101, "forward", "y = fused_attention(q, k, v, self.rel_bias, causal=True, softmax_scale=self.scale)")
	sFnApply   = model(100, "forward", "y = FlashAttentionFn.apply(q, k, v, self.scale)")

	// FlashAttentionFn, a torch.autograd.Function over registered kernels
	sFnKern     = model(80, "forward", "return attn_ext.flash_attention(q, k, v, scale)")
	sFnKernGrad = model(86, "backward", "dq, dk, dv = attn_ext.flash_attention_grad(q, k, v, grad_out, ctx.scale)")
	sOutCall    = model(102, "forward", "return self.out(y)")

	// MLP.forward
	sFc1Call = model(127, "forward", "h = self.act(self.fc1(x))")
	sHalf    = model(128, "forward", "h = h.half()                                    # fp16 down-projection")
	sFc2Call = model(129, "forward", "return self.fc2(h)")
	sFc2F    = model(129, "forward", "return self.fc2(h).float()")

	// MoELayer.forward and Expert.forward
	sRouterCall = model(232, "forward", "weights, idx = self.router(x.view(-1, x.size(-1)))")
	sBincount   = model(235, "forward", "counts = torch.bincount(idx.view(-1), minlength=self.num_experts)")
	sCntBuf     = model(236, "forward", "recv_counts = torch.empty_like(counts)")
	sCntA2A     = model(237, "forward", "dist.all_to_all_single(recv_counts, counts, group=self.ep_group)")
	sArgsort    = model(238, "forward", "order = torch.argsort(idx.view(-1), stable=True)")
	sPermute    = model(239, "forward", "permuted = x.view(-1, x.size(-1)).index_select(0, order // self.k)")
	sDispatch   = model(241, "forward", "recv = all_to_all(self.ep_group, permuted, recv_splits, send_splits)")
	sSplit      = model(243, "forward", "chunks = recv.split(tokens_per_expert.tolist())")
	sExpertCall = model(244, "forward", "outs.append(expert(chunk))")
	sCat        = model(245, "forward", "out = torch.cat(outs)")
	sCombine    = model(247, "forward", "back = all_to_all(self.ep_group, out, send_splits, recv_splits)")
	sWeigh      = model(248, "forward", "back = back * weights.view(-1)[order].unsqueeze(-1)")
	sZerosLike  = model(249, "forward", "y = torch.zeros_like(x.view(-1, x.size(-1)))")
	sIndexAdd   = model(249, "forward", "y.index_add_(0, order // self.k, back)")
	sExpPow     = model(277, "forward", "x = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True))")
	sExpFc      = model(278, "forward", "return self.fc2(self.act(self.fc1(x)))")

	// train.py
	sLoss        = train(144, "train_step", "loss = F.cross_entropy(logits.view(-1, logits.size(-1)), labels.view(-1))")
	sGradAR      = train(30, "allreduce_grads", "dist.all_reduce(p.grad, op=dist.ReduceOp.SUM, group=group)")
	sGradDiv     = train(31, "allreduce_grads", "p.grad.div_(group_size)")
	sLossScale   = train(145, "train_step", "(loss * scaler.scale).backward()")
	sGradHalf    = train(60, "allreduce_grads_fp16", "g16 = p.grad.half()")
	sGradAR16    = train(61, "allreduce_grads_fp16", "dist.all_reduce(g16, op=dist.ReduceOp.SUM, group=group)")
	sGradCheck   = train(64, "allreduce_grads_fp16", "finite = all(torch.isfinite(g).all() for g in grads16)")
	sGradUnscale = train(67, "allreduce_grads_fp16", "p.grad = g16.float() / (scaler.scale * group_size)")
	sLossClone   = train(150, "train_step", "loss_avg = loss.detach().clone()")
	sLossAR      = train(151, "train_step", "dist.all_reduce(loss_avg, op=dist.ReduceOp.SUM, group=dp_group)")
	sRecvBuf     = train(45, "recv_forward", "buf = torch.empty(shape, dtype=dtype, device='cuda')")
	sRecv        = train(46, "recv_forward", "dist.recv(buf, src)")
	sSend        = train(40, "send_forward", "dist.send(output, dst)")
	sRecvGBuf    = train(55, "recv_backward", "grad = torch.empty_like(output)")
	sRecvG       = train(56, "recv_backward", "dist.recv(grad, src)")
	sSendG       = train(50, "send_backward", "dist.send(stage_input.grad, dst)")

	// ZeRO-1 and the bucketed reducer
	sZeroReduce  = train(36, "reduce_grads", "dist.reduce(p.grad, dst=owner, group=group)")
	sZeroDiv     = train(38, "reduce_grads", "p.grad.div_(group.size())")
	sZeroBcast   = mw.NewSite(zeroPy, 74, "broadcast_params", "dist.broadcast(p.data, src=owner, group=self.group)")
	sBucketCat   = mw.NewSite(reducerPy, 40, "reduce", "flat = torch.cat([p.grad.view(-1) for p in bucket])")
	sBucketCount = mw.NewSite(reducerPy, 41, "reduce", "cnt = token_mask[bucket.tokens].sum()")
	sBucketAR    = mw.NewSite(reducerPy, 42, "reduce", "dist.all_reduce(flat, group=bucket.group)")
	sBucketCntAR = mw.NewSite(reducerPy, 43, "reduce", "dist.all_reduce(cnt, group=bucket.group)")
	sBucketDiv   = mw.NewSite(reducerPy, 44, "reduce", "flat = flat / cnt")

	// optimizers
	sAdamM     = torchf("optim/adam.py", 360, "_single_tensor_adam", "exp_avg.mul_(beta1).add_(grad, alpha=1 - beta1)")
	sAdamV     = torchf("optim/adam.py", 361, "_single_tensor_adam", "exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)")
	sAdamDenom = torchf("optim/adam.py", 377, "_single_tensor_adam", "denom = torch.sqrt(exp_avg_sq).add_(eps)")
	sAdamStep  = torchf("optim/adam.py", 379, "_single_tensor_adam", "param.addcdiv_(exp_avg, denom, value=-step_size)")
	sSGDStep   = torchf("optim/sgd.py", 245, "_single_tensor_sgd", "param.add_(d_p, alpha=-lr)")
	sClipNorm  = torchf("nn/utils/clip_grad.py", 42, "clip_grad_norm_", "total_norm = torch.norm(torch.stack([torch.norm(g.detach(), norm_type).to(device) for g in grads]), norm_type)")
	sClipCoef  = torchf("nn/utils/clip_grad.py", 47, "clip_grad_norm_", "clip_coef = max_norm / (total_norm + 1e-6)")
	sClipClamp = torchf("nn/utils/clip_grad.py", 49, "clip_grad_norm_", "clip_coef_clamped = torch.clamp(clip_coef, max=1.0)")
	sClipMul   = torchf("nn/utils/clip_grad.py", 51, "clip_grad_norm_", "g.detach().mul_(clip_coef_clamped.to(g.device))")
)
