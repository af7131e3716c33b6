//go:build amd64

#include "textflag.h"

// Bytes broadcast to 32 lanes: b d m _ 1 ".
DATA needleConsts<>+0(SB)/8, $0x6262626262626262
DATA needleConsts<>+8(SB)/8, $0x6262626262626262
DATA needleConsts<>+16(SB)/8, $0x6262626262626262
DATA needleConsts<>+24(SB)/8, $0x6262626262626262
DATA needleConsts<>+32(SB)/8, $0x6464646464646464
DATA needleConsts<>+40(SB)/8, $0x6464646464646464
DATA needleConsts<>+48(SB)/8, $0x6464646464646464
DATA needleConsts<>+56(SB)/8, $0x6464646464646464
DATA needleConsts<>+64(SB)/8, $0x6d6d6d6d6d6d6d6d
DATA needleConsts<>+72(SB)/8, $0x6d6d6d6d6d6d6d6d
DATA needleConsts<>+80(SB)/8, $0x6d6d6d6d6d6d6d6d
DATA needleConsts<>+88(SB)/8, $0x6d6d6d6d6d6d6d6d
DATA needleConsts<>+96(SB)/8, $0x5f5f5f5f5f5f5f5f
DATA needleConsts<>+104(SB)/8, $0x5f5f5f5f5f5f5f5f
DATA needleConsts<>+112(SB)/8, $0x5f5f5f5f5f5f5f5f
DATA needleConsts<>+120(SB)/8, $0x5f5f5f5f5f5f5f5f
DATA needleConsts<>+128(SB)/8, $0x3131313131313131
DATA needleConsts<>+136(SB)/8, $0x3131313131313131
DATA needleConsts<>+144(SB)/8, $0x3131313131313131
DATA needleConsts<>+152(SB)/8, $0x3131313131313131
DATA needleConsts<>+160(SB)/8, $0x2222222222222222
DATA needleConsts<>+168(SB)/8, $0x2222222222222222
DATA needleConsts<>+176(SB)/8, $0x2222222222222222
DATA needleConsts<>+184(SB)/8, $0x2222222222222222
GLOBL needleConsts<>(SB), RODATA|NOPTR, $192

// func needleBlockAVX2(b *byte, blocks int) int
//
// Returns the index of the first 32-byte block j of b[32j:32j+32] in which
// some position t may start a backward needle: b at t and d at t+7
// ("backward"), m at t and d at t+10 ("meters_grad"), or _ 1 " at t, t+1,
// t+2; blocks when none may. It reads b[0] to b[32*blocks+9] inclusive.
TEXT ·needleBlockAVX2(SB), NOSPLIT, $0-24
	MOVQ b+0(FP), SI
	MOVQ blocks+8(FP), CX
	XORQ AX, AX
	TESTQ CX, CX
	JZ   done
	VMOVDQU needleConsts<>+32(SB), Y15

loop:
	VMOVDQU (SI), Y0
	VPCMPEQB needleConsts<>+0(SB), Y0, Y1
	VPCMPEQB 7(SI), Y15, Y2
	VPAND    Y2, Y1, Y1
	VPCMPEQB needleConsts<>+64(SB), Y0, Y3
	VPCMPEQB 10(SI), Y15, Y4
	VPAND    Y4, Y3, Y3
	VPOR     Y3, Y1, Y1
	VPCMPEQB needleConsts<>+96(SB), Y0, Y5
	VMOVDQU  1(SI), Y6
	VPCMPEQB needleConsts<>+128(SB), Y6, Y6
	VPAND    Y6, Y5, Y5
	VMOVDQU  2(SI), Y7
	VPCMPEQB needleConsts<>+160(SB), Y7, Y7
	VPAND    Y7, Y5, Y5
	VPOR     Y5, Y1, Y1
	VPTEST   Y1, Y1
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

// func needleBlockAVX512(b *byte, blocks int) int
//
// needleBlockAVX2 64 bytes at a time: the index of the first 64-byte block
// in which a backward needle may start, blocks when none may. It reads
// b[0] to b[64*blocks+9] inclusive.
TEXT ·needleBlockAVX512(SB), NOSPLIT, $0-24
	MOVQ b+0(FP), SI
	MOVQ blocks+8(FP), CX
	XORQ AX, AX
	TESTQ CX, CX
	JZ   done512
	VPBROADCASTB needleConsts<>+0(SB), Z16   // b
	VPBROADCASTB needleConsts<>+32(SB), Z17  // d
	VPBROADCASTB needleConsts<>+64(SB), Z18  // m
	VPBROADCASTB needleConsts<>+96(SB), Z19  // _
	VPBROADCASTB needleConsts<>+128(SB), Z20 // 1
	VPBROADCASTB needleConsts<>+160(SB), Z21 // "

loop512:
	VMOVDQU64 (SI), Z0
	VMOVDQU64 7(SI), Z1
	VPCMPEQB  Z17, Z1, K1
	VPCMPEQB  Z16, Z0, K1, K1 // b, and d 7 after
	VMOVDQU64 10(SI), Z2
	VPCMPEQB  Z17, Z2, K2
	VPCMPEQB  Z18, Z0, K2, K2 // m, and d 10 after
	KORQ      K1, K2, K1
	VMOVDQU64 1(SI), Z3
	VPCMPEQB  Z20, Z3, K3
	VPCMPEQB  Z19, Z0, K3, K3
	VMOVDQU64 2(SI), Z4
	VPCMPEQB  Z21, Z4, K3, K3 // _1"
	KORTESTQ  K1, K3
	JNZ       found512
	ADDQ      $64, SI
	INCQ      AX
	CMPQ      AX, CX
	JB        loop512

found512:
	VZEROUPPER

done512:
	MOVQ AX, ret+16(FP)
	RET
