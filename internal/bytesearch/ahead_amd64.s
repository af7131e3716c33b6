//go:build amd64

#include "textflag.h"

// Bytes broadcast to 32 lanes, one vector each: . 0 9 + e x c o s i p.
DATA aheadConsts<>+0(SB)/8, $0x2e2e2e2e2e2e2e2e
DATA aheadConsts<>+8(SB)/8, $0x2e2e2e2e2e2e2e2e
DATA aheadConsts<>+16(SB)/8, $0x2e2e2e2e2e2e2e2e
DATA aheadConsts<>+24(SB)/8, $0x2e2e2e2e2e2e2e2e
DATA aheadConsts<>+32(SB)/8, $0x3030303030303030
DATA aheadConsts<>+40(SB)/8, $0x3030303030303030
DATA aheadConsts<>+48(SB)/8, $0x3030303030303030
DATA aheadConsts<>+56(SB)/8, $0x3030303030303030
DATA aheadConsts<>+64(SB)/8, $0x0909090909090909
DATA aheadConsts<>+72(SB)/8, $0x0909090909090909
DATA aheadConsts<>+80(SB)/8, $0x0909090909090909
DATA aheadConsts<>+88(SB)/8, $0x0909090909090909
DATA aheadConsts<>+96(SB)/8, $0x2b2b2b2b2b2b2b2b
DATA aheadConsts<>+104(SB)/8, $0x2b2b2b2b2b2b2b2b
DATA aheadConsts<>+112(SB)/8, $0x2b2b2b2b2b2b2b2b
DATA aheadConsts<>+120(SB)/8, $0x2b2b2b2b2b2b2b2b
DATA aheadConsts<>+128(SB)/8, $0x6565656565656565
DATA aheadConsts<>+136(SB)/8, $0x6565656565656565
DATA aheadConsts<>+144(SB)/8, $0x6565656565656565
DATA aheadConsts<>+152(SB)/8, $0x6565656565656565
DATA aheadConsts<>+160(SB)/8, $0x7878787878787878
DATA aheadConsts<>+168(SB)/8, $0x7878787878787878
DATA aheadConsts<>+176(SB)/8, $0x7878787878787878
DATA aheadConsts<>+184(SB)/8, $0x7878787878787878
DATA aheadConsts<>+192(SB)/8, $0x6363636363636363
DATA aheadConsts<>+200(SB)/8, $0x6363636363636363
DATA aheadConsts<>+208(SB)/8, $0x6363636363636363
DATA aheadConsts<>+216(SB)/8, $0x6363636363636363
DATA aheadConsts<>+224(SB)/8, $0x6f6f6f6f6f6f6f6f
DATA aheadConsts<>+232(SB)/8, $0x6f6f6f6f6f6f6f6f
DATA aheadConsts<>+240(SB)/8, $0x6f6f6f6f6f6f6f6f
DATA aheadConsts<>+248(SB)/8, $0x6f6f6f6f6f6f6f6f
DATA aheadConsts<>+256(SB)/8, $0x7373737373737373
DATA aheadConsts<>+264(SB)/8, $0x7373737373737373
DATA aheadConsts<>+272(SB)/8, $0x7373737373737373
DATA aheadConsts<>+280(SB)/8, $0x7373737373737373
DATA aheadConsts<>+288(SB)/8, $0x6969696969696969
DATA aheadConsts<>+296(SB)/8, $0x6969696969696969
DATA aheadConsts<>+304(SB)/8, $0x6969696969696969
DATA aheadConsts<>+312(SB)/8, $0x6969696969696969
DATA aheadConsts<>+320(SB)/8, $0x7070707070707070
DATA aheadConsts<>+328(SB)/8, $0x7070707070707070
DATA aheadConsts<>+336(SB)/8, $0x7070707070707070
DATA aheadConsts<>+344(SB)/8, $0x7070707070707070
GLOBL aheadConsts<>(SB), RODATA|NOPTR, $352

// func aheadMasksAVX2(b *byte, blocks int, out *uint64) int
//
// For each 32-byte block j at b[32j:32j+32] whose mask is not zero, it
// appends j<<32 | mask to out and returns how many it appended; the mask
// has bit t set when the byte at k = 32j+t is
//   - a '.' with a digit at k-1 and k-4, '0' at k+1 and no digit at k+2:
//     the end of a number such as 44000.0 (four digits or more before
//     the point, a whole value);
//   - a '+' (the sign of a positive exponent);
//   - a '.' before "ex", "co", "si" or "sp" (".exp", ".cosh", ".sinh",
//     ".special_exp2", and more that the caller rules out): a call of
//     the exp family may be named there.
// It reads b[-4] to b[32*blocks+2] inclusive.
TEXT ·aheadMasksAVX2(SB), NOSPLIT, $0-32
	MOVQ b+0(FP), SI
	MOVQ blocks+8(FP), CX
	MOVQ out+16(FP), DI
	MOVQ DI, R8
	XORQ DX, DX
	TESTQ CX, CX
	JZ   done
	VMOVDQU aheadConsts<>+32(SB), Y13 // '0'
	VMOVDQU aheadConsts<>+64(SB), Y14 // 9
	VMOVDQU aheadConsts<>+0(SB), Y15  // '.'

loop:
	VMOVDQU (SI), Y0
	VPCMPEQB Y15, Y0, Y1 // '.'
	VMOVDQU 1(SI), Y2
	VPCMPEQB Y13, Y2, Y3 // '0' next
	VPAND    Y1, Y3, Y3
	VMOVDQU -1(SI), Y4
	VPSUBB   Y13, Y4, Y4
	VPMINUB  Y14, Y4, Y5
	VPCMPEQB Y5, Y4, Y4 // a digit before
	VPAND    Y4, Y3, Y3
	VMOVDQU -4(SI), Y4
	VPSUBB   Y13, Y4, Y4
	VPMINUB  Y14, Y4, Y5
	VPCMPEQB Y5, Y4, Y4 // a digit four before
	VPAND    Y4, Y3, Y3
	VMOVDQU 2(SI), Y6
	VPSUBB   Y13, Y6, Y4
	VPMINUB  Y14, Y4, Y5
	VPCMPEQB Y5, Y4, Y4 // a digit two after
	VPANDN   Y3, Y4, Y3 // a whole number of four digits or more
	VPCMPEQB aheadConsts<>+96(SB), Y0, Y4 // '+'
	VPOR     Y4, Y3, Y3
	VPCMPEQB aheadConsts<>+128(SB), Y2, Y4 // 'e' next
	VPCMPEQB aheadConsts<>+160(SB), Y6, Y5 // 'x' two after
	VPAND    Y5, Y4, Y4
	VPCMPEQB aheadConsts<>+192(SB), Y2, Y5 // 'c' next
	VPCMPEQB aheadConsts<>+224(SB), Y6, Y7 // 'o' two after
	VPAND    Y7, Y5, Y5
	VPOR     Y5, Y4, Y4
	VPCMPEQB aheadConsts<>+256(SB), Y2, Y5 // 's' next
	VPCMPEQB aheadConsts<>+288(SB), Y6, Y7 // 'i' two after
	VPCMPEQB aheadConsts<>+320(SB), Y6, Y8 // 'p' two after
	VPOR     Y8, Y7, Y7
	VPAND    Y7, Y5, Y5
	VPOR     Y5, Y4, Y4
	VPAND    Y1, Y4, Y4 // ".ex", ".co", ".si" or ".sp"
	VPOR     Y4, Y3, Y3
	VPMOVMSKB Y3, AX
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
