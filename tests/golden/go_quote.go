// strconv.Quote of each input (base64 of its bytes, one a line): the golden answers of the plugin's go_quote.
package main

import (
	"bufio"
	"encoding/base64"
	"fmt"
	"os"
	"strconv"
)

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	for in.Scan() {
		raw, err := base64.StdEncoding.DecodeString(in.Text())
		if err != nil {
			panic(err)
		}
		fmt.Println(strconv.Quote(string(raw)))
	}
}
