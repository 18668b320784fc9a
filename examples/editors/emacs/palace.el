;;; palace.el --- palace's language server in Emacs, through eglot  -*- lexical-binding: t; -*-

;; palace lsp shows governed knowledge next to the code it applies to.
;; This file registers it with eglot and adds two commands:
;;
;;   M-x palace-context   the context pack for this file (the palace.context command)
;;   M-x palace-brief     the brief for this file (the palace/brief request)
;;
;; Works with Emacs 28 and eglot 1.9 (Debian: apt-get install emacs-nox elpa-eglot)
;; and with Emacs 29 or later, where eglot is built in.  eglot shows the hover in
;; eldoc (the echo area, or M-x eldoc-doc-buffer) and the trigger matches as flymake
;; diagnostics; eglot 1.9 draws no code lens and no inlay hints.
;;
;; eglot runs one language server per buffer: a major mode listed in
;; `palace-modes' gets palace instead of its usual server (gopls for go-mode).

;;; Code:

(require 'eglot)
(require 'jsonrpc)
(require 'json)

(defgroup palace nil
  "Governed memory for coding agents, in the editor."
  :group 'tools)

(defcustom palace-program "palace"
  "The palace binary `palace-setup' starts as \"PROGRAM lsp\"."
  :type 'string)

(defcustom palace-lsp-args '("lsp")
  "Arguments of `palace-program' that start the language server.
Add \"--mode\" \"agent\" to browse as an agent does."
  :type '(repeat string))

(defcustom palace-modes '(text-mode markdown-mode)
  "Major modes whose buffers eglot serves with palace.
eglot runs one server per buffer, so a mode listed here gets palace instead
of its usual language server."
  :type '(repeat symbol))

(defun palace-eglot-contact (&optional _interactive)
  "The command eglot runs for palace: `palace-program' and `palace-lsp-args'."
  (cons palace-program palace-lsp-args))

;;;###autoload
(defun palace-setup ()
  "Register palace with eglot for the buffers of `palace-modes'.
Then M-x eglot in such a buffer starts it (or add `eglot-ensure' to the
modes' hooks)."
  (add-to-list 'eglot-server-programs (cons palace-modes #'palace-eglot-contact)))

(defun palace--server ()
  (or (eglot-current-server)
      (user-error "palace: no language server in this buffer; run M-x eglot first")))

(defun palace--args (query)
  "The argument object of a palace request about this buffer's file."
  (append (eglot--TextDocumentIdentifier)
          (unless (string-empty-p (or query "")) (list :query query))))

(defun palace--show (name text)
  (with-current-buffer (get-buffer-create name)
    (let ((inhibit-read-only t))
      (erase-buffer)
      (insert text))
    (goto-char (point-min))
    (special-mode)
    (display-buffer (current-buffer))
    (current-buffer)))

;;;###autoload
(defun palace-context (&optional query)
  "Show the context pack for this file, for QUERY when given.
This is the palace.context command the code lens runs in other editors."
  (interactive (list (read-string "palace context for (empty: this file): ")))
  (let ((pack (jsonrpc-request (palace--server) :workspace/executeCommand
                               (list :command "palace.context"
                                     :arguments (vector (palace--args query))))))
    (palace--show "*palace context*" (plist-get pack :rendered))))

;;;###autoload
(defun palace-brief (&optional query)
  "Show the brief for this file (JSON), for QUERY when given."
  (interactive (list (read-string "palace brief for (empty: this file): ")))
  (let* ((brief (jsonrpc-request (palace--server) :palace/brief (palace--args query)))
         (buf (palace--show "*palace brief*" (let ((json-encoding-pretty-print t)) (json-encode brief)))))
    (with-current-buffer buf (js-mode) (read-only-mode 1))
    buf))

(provide 'palace)
;;; palace.el ends here
