package nodeagent

import (
	"errors"
	"fmt"
	"os"
	"strings"
)

// TokenEnv names the environment variable that may hold the bearer token.
const TokenEnv = "VLLM_NODE_AGENT_TOKEN"

// LoadToken returns the bearer token from file (when set) or else from the
// environment value env; "" means no token is required. A token file that
// is empty or unreadable is an error, so a typo does not silently open the
// agent. The token itself never appears in errors.
func LoadToken(file, env string) (string, error) {
	if file == "" {
		return strings.TrimSpace(env), nil
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("token file: %w", err)
	}
	tok := strings.TrimSpace(string(b))
	if tok == "" {
		return "", fmt.Errorf("token file %s: %w", file, errors.New("file is empty"))
	}
	return tok, nil
}
