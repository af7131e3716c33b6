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


// func anchorMasksAVX512(b *byte, blocks int, out *uint64) int
//
// anchorMasksAVX2 64 bytes at a time, with AVX-512BW compares into mask
// registers: blocks counts 64-byte blocks, and each is handed back as its
// two 32-byte halves (2j and 2j+1), those whose mask is not zero, in the
// format of anchorMasksAVX2. It reads b[-2] to b[64*blocks+1] inclusive.
TEXT ·anchorMasksAVX512(SB), NOSPLIT, $0-32
	MOVQ b+0(FP), SI
	MOVQ blocks+8(FP), CX
	MOVQ out+16(FP), DI
	MOVQ DI, R8
	XORQ DX, DX
	TESTQ CX, CX
	JZ   done

	VPBROADCASTB anchorConsts<>+0(SB), Z16   // N
	VPBROADCASTB anchorConsts<>+32(SB), Z17  // a
	VPBROADCASTB anchorConsts<>+64(SB), Z18  // "
	VPBROADCASTB anchorConsts<>+96(SB), Z19  // I
	VPBROADCASTB anchorConsts<>+128(SB), Z20 // n
	VPBROADCASTB anchorConsts<>+160(SB), Z21 // backslash
	VPBROADCASTB anchorConsts<>+192(SB), Z22 // 0x20
	VPBROADCASTB anchorConsts<>+224(SB), Z23 // e
	VPBROADCASTB anchorConsts<>+256(SB), Z24 // 0
	VPBROADCASTB anchorConsts<>+288(SB), Z25 // 9
	VPBROADCASTB anchorConsts<>+320(SB), Z26 // f
	VPBROADCASTB anchorConsts<>+352(SB), Z27 // y
	VPBROADCASTB anchorConsts<>+384(SB), Z28 // -
	VPBROADCASTB anchorConsts<>+416(SB), Z29 // :

loop:
	VMOVDQU64 (SI), Z0
	VMOVDQU64 -1(SI), Z1
	VMOVDQU64 1(SI), Z2
	VPCMPEQB  Z18, Z2, K1 // " next
	VPCMPEQB  Z17, Z2, K2
	KORQ      K1, K2, K2  // a or " next
	VPCMPEQB  Z16, Z0, K2, K3 // N before a or "
	VPCMPEQB  Z20, Z2, K4
	VPCMPEQB  Z19, Z0, K4, K4 // I before n
	KORQ      K4, K3, K3
	VPCMPEQB  Z21, Z0, K4 // backslash
	KORQ      K4, K3, K3
	VPORQ     Z22, Z0, Z7 // lower case
	VPSUBB    Z24, Z1, Z4
	VPMINUB   Z25, Z4, Z6
	VPCMPEQB  Z6, Z4, K4 // a digit before
	VPCMPEQB  Z23, Z7, K4, K4 // e or E after a digit
	VPCMPEQB  Z28, Z2, K5 // - next
	KANDNQ    K4, K5, K4 // and not before '-'
	KORQ      K4, K3, K3
	VPCMPEQB  Z26, Z7, K4
	VPCMPEQB  Z27, Z7, K5
	KORQ      K5, K4, K4
	VPCMPEQB  Z20, Z0, K5
	KORQ      K5, K4, K4 // f F y Y n
	VMOVDQU64 2(SI), Z8
	VPCMPEQB  Z29, Z8, K5 // ':' two after: a member name
	VMOVDQU64 -2(SI), Z10
	VPCMPEQB  Z20, Z10, K6
	VPCMPEQB  Z17, Z1, K6, K6 // ends "nan"
	KANDNQ    K5, K6, K5 // a name that does not end "nan"
	KANDNQ    K4, K5, K4
	KANDQ     K1, K4, K4 // before '"'
	KORQ      K4, K3, K3
	KMOVQ     K3, AX
	TESTQ     AX, AX
	JZ        next
	MOVQ      DX, R9
	SHLQ      $1, R9
	TESTL     AX, AX
	JZ        high
	MOVL      AX, (DI)
	MOVL      R9, 4(DI)
	ADDQ      $8, DI

high:
	SHRQ      $32, AX
	JZ        next
	INCQ      R9
	MOVL      AX, (DI)
	MOVL      R9, 4(DI)
	ADDQ      $8, DI

next:
	ADDQ      $64, SI
	INCQ      DX
	CMPQ      DX, CX
	JB        loop
	VZEROUPPER

done:
	SUBQ      R8, DI
	SHRQ      $3, DI
	MOVQ      DI, ret+24(FP)
	RET


// func anchorMasksVBMI(b *byte, blocks int, out *uint64, t *anchorTable) int
//
// anchorMasksAVX512 by table look-ups instead of compares: each of the
// five bytes plausible looks at (two before an anchor to two after) is
// turned into the conditions it meets by one VPERMI2B over a 128-byte
// table (anchorTable, built from plausible's rules in anchors_vbmi.go),
// and a byte is an anchor where all five agree on a condition. A block
// holding a byte of 0x80 or more (which VPERMI2B would read as its low
// seven bits) takes each such byte's conditions from the table's last
// row instead. Same reads and output as anchorMasksAVX512.
TEXT ·anchorMasksVBMI(SB), NOSPLIT, $0-40
	MOVQ b+0(FP), SI
	MOVQ blocks+8(FP), CX
	MOVQ out+16(FP), DI
	MOVQ t+24(FP), BX
	MOVQ DI, R8
	XORQ DX, DX
	TESTQ CX, CX
	JZ   vdone

	VMOVDQU64 0(BX), Z6     // the byte itself
	VMOVDQU64 64(BX), Z7
	VMOVDQU64 128(BX), Z8   // the byte after it
	VMOVDQU64 192(BX), Z9
	VMOVDQU64 256(BX), Z10  // the byte before it
	VMOVDQU64 320(BX), Z11
	VMOVDQU64 384(BX), Z12  // two before
	VMOVDQU64 448(BX), Z13
	VMOVDQU64 512(BX), Z14  // two after
	VMOVDQU64 576(BX), Z15
	VPBROADCASTB 640(BX), Z17 // what a byte of 0x80 or more meets, in each place
	VPBROADCASTB 641(BX), Z18
	VPBROADCASTB 642(BX), Z19
	VPBROADCASTB 643(BX), Z20
	VPBROADCASTB 644(BX), Z21

vloop:
	VMOVDQU64 (SI), Z0
	VMOVDQU64 1(SI), Z1
	VMOVDQU64 -1(SI), Z2
	VMOVDQU64 -2(SI), Z3
	VMOVDQU64 2(SI), Z4
	VPMOVB2M  Z3, K1 // bytes -2 to 61
	VPMOVB2M  Z4, K2 // bytes 2 to 65
	KORTESTQ  K1, K2
	JNZ       vhigh
	VPERMI2B  Z7, Z6, Z0
	VPERMI2B  Z9, Z8, Z1
	VPERMI2B  Z11, Z10, Z2
	VPERMI2B  Z13, Z12, Z3
	VPERMI2B  Z15, Z14, Z4

vcombine:
	VPTERNLOGD $0x80, Z2, Z1, Z0 // and
	VPTERNLOGD $0x80, Z4, Z3, Z0
	VPTESTMB   Z0, Z0, K3
	KMOVQ      K3, AX
	TESTQ      AX, AX
	JZ         vnext
	MOVQ       DX, R9
	SHLQ       $1, R9
	TESTL      AX, AX
	JZ         vupper
	MOVL       AX, (DI)
	MOVL       R9, 4(DI)
	ADDQ       $8, DI

vupper:
	SHRQ       $32, AX
	JZ         vnext
	INCQ       R9
	MOVL       AX, (DI)
	MOVL       R9, 4(DI)
	ADDQ       $8, DI

vnext:
	ADDQ       $64, SI
	INCQ       DX
	CMPQ       DX, CX
	JB         vloop
	VZEROUPPER

vdone:
	SUBQ       R8, DI
	SHRQ       $3, DI
	MOVQ       DI, ret+32(FP)
	RET

vhigh:
	VPMOVB2M   Z0, K3
	VPMOVB2M   Z1, K4
	VPMOVB2M   Z2, K5
	VPERMI2B   Z7, Z6, Z0
	VPERMI2B   Z9, Z8, Z1
	VPERMI2B   Z11, Z10, Z2
	VPERMI2B   Z13, Z12, Z3
	VPERMI2B   Z15, Z14, Z4
	VPBLENDMB  Z17, Z0, K3, Z0
	VPBLENDMB  Z18, Z1, K4, Z1
	VPBLENDMB  Z19, Z2, K5, Z2
	VPBLENDMB  Z20, Z3, K1, Z3
	VPBLENDMB  Z21, Z4, K2, Z4
	JMP        vcombine
