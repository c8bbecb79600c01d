// Regenerates model_uri.json: Go's url.Parse and URL.String() for each input, the way KServe's
// identity.ModelURIHash uses them (userinfo, query and fragment cleared), and the hash of the result.
//
//	cd tests/unit/kernelcache/golden
//	jq -c "[.results[].input]" model_uri.json | go run gen_model_uri.go > new.json && mv new.json model_uri.json
package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/url"
	"os"
	"runtime"
)

type result struct {
	Input   string `json:"input"`
	Printed string `json:"printed"`
	Error   string `json:"error"`
	Hash    string `json:"hash"`
}

func main() {
	var inputs []string
	if err := json.NewDecoder(os.Stdin).Decode(&inputs); err != nil {
		panic(err)
	}
	out := struct {
		Go      string   `json:"go"`
		Results []result `json:"results"`
	}{Go: runtime.Version()}
	for _, raw := range inputs {
		r := result{Input: raw}
		u, err := url.Parse(raw)
		if err != nil {
			r.Error = err.(*url.Error).Err.Error()
		} else {
			u.User = nil
			u.RawQuery = ""
			u.ForceQuery = false
			u.Fragment = ""
			u.RawFragment = ""
			r.Printed = u.String()
			b, _ := json.Marshal([]string{r.Printed})
			sum := sha256.Sum256(b)
			r.Hash = "sha256:" + hex.EncodeToString(sum[:])
		}
		out.Results = append(out.Results, r)
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", " ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(out); err != nil {
		panic(err)
	}
}
