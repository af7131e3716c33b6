package jsonlex

// literal consumes the rest of the bare word lit (true, NaN, Infinity, or
// the part after '-' of -Infinity), which must start at buf[pos]. off is the
// offset of the token's first byte.
func (l *Lexer) literal(off int64, pos int, lit string, kind Kind) (Token, error) {
	buf := l.buf
	if n := pos + len(lit); n <= len(buf) && string(buf[pos:n]) == lit {
		l.pos = n
	} else {
		l.pos = pos
		for i := 0; i < len(lit); i++ {
			if l.pos >= len(l.buf) && !l.more() {
				return l.ended(" inside literal " + literalText(kind))
			}
			if c := l.buf[l.pos]; c != lit[i] {
				return l.syntaxAt(l.pos, "invalid character "+quoteChar(c)+" in literal "+literalText(kind))
			}
			l.pos++
		}
	}
	l.end = l.base + int64(l.pos)
	l.afterValue()
	return Token{Kind: kind, Offset: off}, nil
}

// literalText returns how a bare-word kind is spelled.
func literalText(k Kind) string {
	switch k {
	case True:
		return "true"
	case False:
		return "false"
	case Null:
		return "null"
	case NaN:
		return "NaN"
	case PosInf:
		return "Infinity"
	default:
		return "-Infinity"
	}
}
