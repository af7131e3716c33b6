//go:build amd64

#include "textflag.h"

// func lastLineCandidateAVX2(b *byte, blocks int, dist int, last byte) int
//
// The index of the last byte of b[0:32*blocks] that is last and lies dist
// bytes after a newline, or -1: the end of a line's start "\n" + dist-1
// bytes + last, looked for from the end, 32 places at a time. It reads
// b[-dist] to b[32*blocks-1]; blocks > 0.
TEXT ·lastLineCandidateAVX2(SB), NOSPLIT, $0-40
	MOVQ    b+0(FP), SI
	MOVQ    blocks+8(FP), CX
	MOVQ    dist+16(FP), DX
	MOVBLZX last+24(FP), AX
	MOVQ    SI, DI
	SUBQ    DX, DI
	VMOVD   AX, X0
	VPBROADCASTB X0, Y0
	MOVL    $0x0a, AX
	VMOVD   AX, X1
	VPBROADCASTB X1, Y1
	MOVQ    CX, R8
	DECQ    R8
	SHLQ    $5, R8

loop:
	VPCMPEQB  (SI)(R8*1), Y0, Y2
	VPCMPEQB  (DI)(R8*1), Y1, Y3
	VPAND     Y2, Y3, Y2
	VPMOVMSKB Y2, AX
	TESTL     AX, AX
	JNZ       found
	SUBQ      $32, R8
	JGE       loop
	VZEROUPPER
	MOVQ      $-1, ret+32(FP)
	RET

found:
	VZEROUPPER
	BSRL      AX, AX
	ADDQ      R8, AX
	MOVQ      AX, ret+32(FP)
	RET
