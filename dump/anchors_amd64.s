//go:build amd64

#include "textflag.h"

// Bytes broadcast to 32 lanes, one vector each: N a " I n \ 0x20 e 0 9 f y - :.
DATA anchorConsts<>+0(SB)/8, $0x4e4e4e4e4e4e4e4e
DATA anchorConsts<>+8(SB)/8, $0x4e4e4e4e4e4e4e4e
DATA anchorConsts<>+16(SB)/8, $0x4e4e4e4e4e4e4e4e
DATA anchorConsts<>+24(SB)/8, $0x4e4e4e4e4e4e4e4e
DATA anchorConsts<>+32(SB)/8, $0x6161616161616161
DATA anchorConsts<>+40(SB)/8, $0x6161616161616161
DATA anchorConsts<>+48(SB)/8, $0x6161616161616161
DATA anchorConsts<>+56(SB)/8, $0x6161616161616161
DATA anchorConsts<>+64(SB)/8, $0x2222222222222222
DATA anchorConsts<>+72(SB)/8, $0x2222222222222222
DATA anchorConsts<>+80(SB)/8, $0x2222222222222222
DATA anchorConsts<>+88(SB)/8, $0x2222222222222222
DATA anchorConsts<>+96(SB)/8, $0x4949494949494949
DATA anchorConsts<>+104(SB)/8, $0x4949494949494949
DATA anchorConsts<>+112(SB)/8, $0x4949494949494949
DATA anchorConsts<>+120(SB)/8, $0x4949494949494949
DATA anchorConsts<>+128(SB)/8, $0x6e6e6e6e6e6e6e6e
DATA anchorConsts<>+136(SB)/8, $0x6e6e6e6e6e6e6e6e
DATA anchorConsts<>+144(SB)/8, $0x6e6e6e6e6e6e6e6e
DATA anchorConsts<>+152(SB)/8, $0x6e6e6e6e6e6e6e6e
DATA anchorConsts<>+160(SB)/8, $0x5c5c5c5c5c5c5c5c
DATA anchorConsts<>+168(SB)/8, $0x5c5c5c5c5c5c5c5c
DATA anchorConsts<>+176(SB)/8, $0x5c5c5c5c5c5c5c5c
DATA anchorConsts<>+184(SB)/8, $0x5c5c5c5c5c5c5c5c
DATA anchorConsts<>+192(SB)/8, $0x2020202020202020
DATA anchorConsts<>+200(SB)/8, $0x2020202020202020
DATA anchorConsts<>+208(SB)/8, $0x2020202020202020
DATA anchorConsts<>+216(SB)/8, $0x2020202020202020
DATA anchorConsts<>+224(SB)/8, $0x6565656565656565
DATA anchorConsts<>+232(SB)/8, $0x6565656565656565
DATA anchorConsts<>+240(SB)/8, $0x6565656565656565
DATA anchorConsts<>+248(SB)/8, $0x6565656565656565
DATA anchorConsts<>+256(SB)/8, $0x3030303030303030
DATA anchorConsts<>+264(SB)/8, $0x3030303030303030
DATA anchorConsts<>+272(SB)/8, $0x3030303030303030
DATA anchorConsts<>+280(SB)/8, $0x3030303030303030
DATA anchorConsts<>+288(SB)/8, $0x0909090909090909
DATA anchorConsts<>+296(SB)/8, $0x0909090909090909
DATA anchorConsts<>+304(SB)/8, $0x0909090909090909
DATA anchorConsts<>+312(SB)/8, $0x0909090909090909
DATA anchorConsts<>+320(SB)/8, $0x6666666666666666
DATA anchorConsts<>+328(SB)/8, $0x6666666666666666
DATA anchorConsts<>+336(SB)/8, $0x6666666666666666
DATA anchorConsts<>+344(SB)/8, $0x6666666666666666
DATA anchorConsts<>+352(SB)/8, $0x7979797979797979
DATA anchorConsts<>+360(SB)/8, $0x7979797979797979
DATA anchorConsts<>+368(SB)/8, $0x7979797979797979
DATA anchorConsts<>+376(SB)/8, $0x7979797979797979
DATA anchorConsts<>+384(SB)/8, $0x2d2d2d2d2d2d2d2d
DATA anchorConsts<>+392(SB)/8, $0x2d2d2d2d2d2d2d2d
DATA anchorConsts<>+400(SB)/8, $0x2d2d2d2d2d2d2d2d
DATA anchorConsts<>+408(SB)/8, $0x2d2d2d2d2d2d2d2d
DATA anchorConsts<>+416(SB)/8, $0x3a3a3a3a3a3a3a3a
DATA anchorConsts<>+424(SB)/8, $0x3a3a3a3a3a3a3a3a
DATA anchorConsts<>+432(SB)/8, $0x3a3a3a3a3a3a3a3a
DATA anchorConsts<>+440(SB)/8, $0x3a3a3a3a3a3a3a3a
GLOBL anchorConsts<>(SB), RODATA|NOPTR, $448

// func anchorMasksAVX2(b *byte, blocks int, out *uint64) int
//
// For each 32-byte block j at b[32j:32j+32] whose mask is not zero, it
// appends j<<32 | mask to out and returns how many it appended; the mask
// has bit t set when the byte at b[32j+t] is an anchor that plausible
// accepts: N before a or ", I before n, a backslash, e or E after a digit
// and not before '-' (a negative exponent never overflows), n f F y Y
// before " that is not before ':' (a member name, such as "Min", is never
// a value) unless it ends "nan" (the is_nan key of nan_check dumps). Blocks
// without an anchor, nearly all of them, cost the caller nothing.
// It reads b[-2] to b[32*blocks+1] inclusive.
TEXT ·anchorMasksAVX2(SB), NOSPLIT, $0-32
	MOVQ b+0(FP), SI
	MOVQ blocks+8(FP), CX
	MOVQ out+16(FP), DI
	MOVQ DI, R8
	XORQ DX, DX
	TESTQ CX, CX
	JZ   done

loop:
	VMOVDQU (SI), Y0
	VMOVDQU -1(SI), Y1
	VMOVDQU 1(SI), Y2
	VPCMPEQB anchorConsts<>+64(SB), Y2, Y3
	VPCMPEQB anchorConsts<>+32(SB), Y2, Y4
	VPOR     Y3, Y4, Y4
	VPCMPEQB anchorConsts<>+0(SB), Y0, Y5
	VPAND    Y4, Y5, Y5
	VPCMPEQB anchorConsts<>+96(SB), Y0, Y4
	VPCMPEQB anchorConsts<>+128(SB), Y2, Y6
	VPAND    Y6, Y4, Y4
	VPOR     Y4, Y5, Y5
	VPCMPEQB anchorConsts<>+160(SB), Y0, Y4
	VPOR     Y4, Y5, Y5
	VPOR     anchorConsts<>+192(SB), Y0, Y7
	VPSUBB   anchorConsts<>+256(SB), Y1, Y4
	VPMINUB  anchorConsts<>+288(SB), Y4, Y6
	VPCMPEQB Y6, Y4, Y4
	VPCMPEQB anchorConsts<>+224(SB), Y7, Y6
	VPAND    Y6, Y4, Y4
	VPCMPEQB anchorConsts<>+384(SB), Y2, Y6
	VPANDN   Y4, Y6, Y4
	VPOR     Y4, Y5, Y5
	VPCMPEQB anchorConsts<>+320(SB), Y7, Y4
	VPCMPEQB anchorConsts<>+352(SB), Y7, Y6
	VPOR     Y6, Y4, Y4
	VPCMPEQB anchorConsts<>+128(SB), Y0, Y6
	VPOR     Y6, Y4, Y4
	VMOVDQU  2(SI), Y8
	VPCMPEQB anchorConsts<>+416(SB), Y8, Y8
	VPCMPEQB anchorConsts<>+32(SB), Y1, Y9
	VMOVDQU  -2(SI), Y10
	VPCMPEQB anchorConsts<>+128(SB), Y10, Y10
	VPAND    Y10, Y9, Y9
	VPANDN   Y8, Y9, Y8
	VPANDN   Y4, Y8, Y4
	VPAND    Y3, Y4, Y4
	VPOR     Y4, Y5, Y5
	VPMOVMSKB Y5, AX
	TESTL    AX, AX
	JZ       next
	MOVL     AX, (DI)
	MOVL     DX, 4(DI)
	ADDQ     $8, DI

next:
	ADDQ     $32, SI
	INCQ     DX
	CMPQ     DX, CX
	JB       loop
	VZEROUPPER

done:
	SUBQ R8, DI
	SHRQ $3, DI
	MOVQ DI, ret+24(FP)
	RET
