//go:build amd64

#include "textflag.h"

// func classifyAVX2(b *byte, blocks int, m *blockMasks)
//
// For each 64-byte block j at b[64j:], m[j] gets the masks of quotes,
// backslashes, opening brackets and closing brackets (see blockMasks):
// bytes compared 32 at a time, the comparisons' high bits gathered with
// VPMOVMSKB. A bracket b is found by b|0x20: '[' and '{' give 0x7b, ']'
// and '}' give 0x7d, and no other byte does.
TEXT ·classifyAVX2(SB), NOSPLIT, $0-24
	MOVQ b+0(FP), SI
	MOVQ blocks+8(FP), CX
	MOVQ m+16(FP), DI
	MOVQ $0x2222222222222222, AX
	MOVQ AX, X8
	VPBROADCASTQ X8, Y10
	MOVQ $0x5c5c5c5c5c5c5c5c, AX
	MOVQ AX, X8
	VPBROADCASTQ X8, Y11
	MOVQ $0x2020202020202020, AX
	MOVQ AX, X8
	VPBROADCASTQ X8, Y12
	MOVQ $0x7b7b7b7b7b7b7b7b, AX
	MOVQ AX, X8
	VPBROADCASTQ X8, Y13
	MOVQ $0x7d7d7d7d7d7d7d7d, AX
	MOVQ AX, X8
	VPBROADCASTQ X8, Y14
	TESTQ CX, CX
	JEQ done

loop:
	VMOVDQU (SI), Y0
	VMOVDQU 32(SI), Y1

	VPCMPEQB Y10, Y0, Y2
	VPCMPEQB Y10, Y1, Y3
	VPMOVMSKB Y2, AX
	VPMOVMSKB Y3, BX
	SHLQ $32, BX
	ORQ BX, AX
	MOVQ AX, 0(DI)

	VPCMPEQB Y11, Y0, Y2
	VPCMPEQB Y11, Y1, Y3
	VPMOVMSKB Y2, AX
	VPMOVMSKB Y3, BX
	SHLQ $32, BX
	ORQ BX, AX
	MOVQ AX, 8(DI)

	VPOR Y12, Y0, Y0
	VPOR Y12, Y1, Y1

	VPCMPEQB Y13, Y0, Y2
	VPCMPEQB Y13, Y1, Y3
	VPMOVMSKB Y2, AX
	VPMOVMSKB Y3, BX
	SHLQ $32, BX
	ORQ BX, AX
	MOVQ AX, 16(DI)

	VPCMPEQB Y14, Y0, Y2
	VPCMPEQB Y14, Y1, Y3
	VPMOVMSKB Y2, AX
	VPMOVMSKB Y3, BX
	SHLQ $32, BX
	ORQ BX, AX
	MOVQ AX, 24(DI)

	ADDQ $64, SI
	ADDQ $32, DI
	DECQ CX
	JNZ loop

done:
	VZEROUPPER
	RET

// func cpuHasAVX2() bool
//
// CPUID leaf 1: OSXSAVE and AVX; XGETBV: the OS saves the YMM state;
// CPUID leaf 7: AVX2.
TEXT ·cpuHasAVX2(SB), NOSPLIT, $0-1
	MOVL $0, AX
	CPUID
	CMPL AX, $7
	JLT no
	MOVL $1, AX
	CPUID
	MOVL CX, R8
	ANDL $0x18000000, R8
	CMPL R8, $0x18000000
	JNE no
	XORL CX, CX
	XGETBV
	ANDL $6, AX
	CMPL AX, $6
	JNE no
	MOVL $7, AX
	XORL CX, CX
	CPUID
	BTL $5, BX
	JCC no
	MOVB $1, ret+0(FP)
	RET

no:
	MOVB $0, ret+0(FP)
	RET
