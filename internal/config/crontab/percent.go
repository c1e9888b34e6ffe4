package crontab

import "strings"

// splitPercent applies cron's % rule to a command, as cronie's
// do_command.c does: the first % not escaped by a backslash ends the
// command, and what follows is the command's standard input, each further
// unescaped % a newline. "\%" is a literal % in both parts; other
// backslashes stay as written. hasInput is false when the line has no
// unescaped %.
func splitPercent(cmd string) (command, input string, hasInput bool) {
	var b strings.Builder
	i := 0
	for ; i < len(cmd); i++ {
		c := cmd[i]
		if c == '\\' && i+1 < len(cmd) {
			// A backslash escapes the next character, whatever it is:
			// "\\%" is two backslashes and the end of the command.
			i++
			if cmd[i] != '%' {
				b.WriteByte('\\')
			}
			b.WriteByte(cmd[i])
			continue
		}
		if c == '%' {
			hasInput = true
			break
		}
		b.WriteByte(c)
	}
	command = b.String()
	if !hasInput {
		return command, "", false
	}
	return command, translateInput(cmd[i+1:]), true
}

// translateInput is cron's loop over the input text, kept as it is: a
// backslash is held back until the next character shows whether it
// escapes a %, and a backslash so written holds back the next one.
func translateInput(s string) string {
	var in strings.Builder
	escaped := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if escaped {
			if c != '%' {
				in.WriteByte('\\')
			}
		} else if c == '%' {
			c = '\n'
		}
		if escaped = c == '\\'; !escaped {
			in.WriteByte(c)
		}
	}
	if escaped {
		in.WriteByte('\\')
	}
	return in.String()
}

// withInput gives command its standard input as a here-document on a
// group around it, so that every command of a list reads it, as they all
// read cron's pipe. The here-document ends the input with a newline where
// cron's would have none; programs reading lines see the same text.
func withInput(command, input string) string {
	delim := "CRONVISOR_STDIN"
	for n := 2; strings.Contains("\n"+input+"\n", "\n"+delim+"\n"); n++ {
		delim = "CRONVISOR_STDIN" + itoa(n)
	}
	input = strings.TrimSuffix(input, "\n")
	return "{\n" + command + "\n} <<'" + delim + "'\n" + input + "\n" + delim
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}
