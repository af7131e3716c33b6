//go:build amd64

#include "textflag.h"

// Bytes broadcast to 32 lanes: g k.
DATA groupConsts<>+0(SB)/8, $0x6767676767676767
DATA groupConsts<>+8(SB)/8, $0x6767676767676767
DATA groupConsts<>+16(SB)/8, $0x6767676767676767
DATA groupConsts<>+24(SB)/8, $0x6767676767676767
DATA groupConsts<>+32(SB)/8, $0x6b6b6b6b6b6b6b6b
DATA groupConsts<>+40(SB)/8, $0x6b6b6b6b6b6b6b6b
DATA groupConsts<>+48(SB)/8, $0x6b6b6b6b6b6b6b6b
DATA groupConsts<>+56(SB)/8, $0x6b6b6b6b6b6b6b6b
GLOBL groupConsts<>(SB), RODATA|NOPTR, $64

// func groupBlockAVX2(b *byte, blocks int) int
//
// Returns the index of the first 32-byte block j of b[32j:32j+32] in which
// some position t may start "group_ranks": g at t and k at t+9; blocks
// when none may. It reads b[0] to b[32*blocks+8] inclusive.
TEXT ·groupBlockAVX2(SB), NOSPLIT, $0-24
	MOVQ b+0(FP), SI
	MOVQ blocks+8(FP), CX
	XORQ AX, AX
	TESTQ CX, CX
	JZ   done
	VMOVDQU groupConsts<>+0(SB), Y14
	VMOVDQU groupConsts<>+32(SB), Y15

loop:
	VPCMPEQB (SI), Y14, Y0
	VPCMPEQB 9(SI), Y15, Y1
	VPAND    Y1, Y0, Y0
	VPTEST   Y0, Y0
	JNZ      found
	ADDQ     $32, SI
	INCQ     AX
	CMPQ     AX, CX
	JB       loop

found:
	VZEROUPPER

done:
	MOVQ AX, ret+16(FP)
	RET

