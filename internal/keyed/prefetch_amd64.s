#include "textflag.h"

// func prefetch(b *bucket)
TEXT ·prefetch(SB), NOSPLIT|NOFRAME, $0-8
	MOVQ	b+0(FP), AX
	PREFETCHT0	(AX)
	RET
