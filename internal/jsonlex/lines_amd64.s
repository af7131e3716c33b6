//go:build amd64

#include "textflag.h"

// LINE_ARGS loads the arguments both searches take (b, blocks, dist, last)
// and broadcasts last to Y0 and '\n' to Y1; SI is b, DI is b-dist, CX is
// blocks.
#define LINE_ARGS \
	MOVQ    b+0(FP), SI \
	MOVQ    blocks+8(FP), CX \
	MOVQ    dist+16(FP), DX \
	MOVBLZX last+24(FP), AX \
	MOVQ    SI, DI \
	SUBQ    DX, DI \
	VMOVD   AX, X0 \
	VPBROADCASTB X0, Y0 \
	MOVL    $0x0a, AX \
	VMOVD   AX, X1 \
	VPBROADCASTB X1, Y1

// LINE_BLOCK sets AX to the mask of the 32 bytes at SI+R8 that are last
// and lie dist bytes after a newline.
#define LINE_BLOCK \
	VPCMPEQB  (SI)(R8*1), Y0, Y2 \
	VPCMPEQB  (DI)(R8*1), Y1, Y3 \
	VPAND     Y2, Y3, Y2 \
	VPMOVMSKB Y2, AX

// func indexAfterNewlineAVX2(b *byte, blocks int, dist int, last byte) int
//
// The index of the first byte of b[0:32*blocks] that is last and lies dist
// bytes after a newline, or -1: the end of a line "\n" + dist-1 bytes +
// last, 32 places at a time (two compares and an and). It reads b[-dist]
// to b[32*blocks-1]; blocks > 0.
TEXT ·indexAfterNewlineAVX2(SB), NOSPLIT, $0-40
	LINE_ARGS
	XORQ    R8, R8

next:
	LINE_BLOCK
	TESTL     AX, AX
	JNZ       found
	ADDQ      $32, R8
	DECQ      CX
	JNZ       next
	VZEROUPPER
	MOVQ      $-1, ret+32(FP)
	RET

found:
	VZEROUPPER
	BSFL      AX, AX
	ADDQ      R8, AX
	MOVQ      AX, ret+32(FP)
	RET

// func lastIndexAfterNewlineAVX2(b *byte, blocks int, dist int, last byte) int
//
// indexAfterNewlineAVX2 from the end: the index of the last such byte, or
// -1. Same reads.
TEXT ·lastIndexAfterNewlineAVX2(SB), NOSPLIT, $0-40
	LINE_ARGS
	MOVQ    CX, R8
	DECQ    R8
	SHLQ    $5, R8

back:
	LINE_BLOCK
	TESTL     AX, AX
	JNZ       lastfound
	SUBQ      $32, R8
	JGE       back
	VZEROUPPER
	MOVQ      $-1, ret+32(FP)
	RET

lastfound:
	VZEROUPPER
	BSRL      AX, AX
	ADDQ      R8, AX
	MOVQ      AX, ret+32(FP)
	RET
