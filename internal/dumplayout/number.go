package dumplayout

// atoi reads the number of a folder name: digits only, any number of
// them; a number past MaxFolderNumber reads as MaxFolderNumber.
func atoi(s string) (int, bool) {
	if s == "" {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = min(n*10+int(c-'0'), MaxFolderNumber)
	}
	return n, true
}
