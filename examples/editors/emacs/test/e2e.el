;;; e2e.el --- palace in batch Emacs with eglot  -*- lexical-binding: t; -*-

;; Driven by cmd/palace's TestEmacsEndToEnd:
;;
;;   emacs --batch -l test/e2e.el FILE
;;
;; With palace.el set up as its README says, open FILE in a go-mode buffer,
;; start eglot through `eglot-server-programs', then collect what eglot
;; shows: the hover eldoc renders at $PALACE_E2E_HOVER_LINE:COL, the flymake
;; diagnostics, and the *palace context* buffer of M-x palace-context.  The
;; result is written as JSON to $PALACE_E2E_OUT.

(require 'json)
(require 'flymake)
(load (expand-file-name "../palace.el" (file-name-directory load-file-name)) nil t)

(defvar palace-e2e-result (list :errors nil))

(defun palace-e2e-put (key value)
  (setq palace-e2e-result (plist-put palace-e2e-result key value)))

(defun palace-e2e-fail (msg)
  (palace-e2e-put :errors (append (plist-get palace-e2e-result :errors) (list msg))))

(defun palace-e2e-wait (pred seconds)
  "Wait for PRED, serving process output, at most SECONDS."
  (let ((deadline (+ (float-time) seconds)))
    (while (and (not (funcall pred)) (< (float-time) deadline))
      (accept-process-output nil 0.05))
    (funcall pred)))

;; A user's go-mode (a package outside Emacs 28): eglot's language id is
;; "go", as palace's scope rules expect for a Go file.
(unless (fboundp 'go-mode)
  (define-derived-mode go-mode prog-mode "Go"))
(setq palace-program (or (getenv "PALACE_BIN") "palace"))
(setq palace-modes '(go-mode))
(palace-setup)
(setq eglot-sync-connect 10)

(condition-case err
    (let ((file (car command-line-args-left)))
      (setq command-line-args-left nil)
      (switch-to-buffer (find-file-noselect file))
      (go-mode)
      (apply #'eglot (eglot--guess-contact))
      (unless (palace-e2e-wait (lambda () (eglot-current-server)) 20)
        (error "eglot did not connect to palace"))
      (let ((server (eglot-current-server)))
        (palace-e2e-put :server (plist-get (eglot--server-info server) :name))
        ;; Hover, as eldoc shows it.
        (goto-char (point-min))
        (forward-line (1- (string-to-number (getenv "PALACE_E2E_HOVER_LINE"))))
        (forward-char (1- (string-to-number (getenv "PALACE_E2E_HOVER_COL"))))
        (let (hover)
          (eglot-hover-eldoc-function (lambda (info &rest _) (setq hover (or info ""))))
          (palace-e2e-wait (lambda () hover) 20)
          (palace-e2e-put :hover (or hover :null)))
        ;; Diagnostics, as flymake holds them.
        (palace-e2e-wait (lambda () (flymake-diagnostics)) 20)
        (palace-e2e-put :diagnostics
                        (vconcat (mapcar (lambda (d)
                                           (list :line (line-number-at-pos (flymake-diagnostic-beg d))
                                                 :type (format "%s" (flymake-diagnostic-type d))
                                                 :text (flymake-diagnostic-text d)))
                                         (flymake-diagnostics))))
        ;; The context pack command.
        (with-current-buffer (palace-context)
          (palace-e2e-put :context (buffer-string)))
        (palace-e2e-put :brief_key_fact
                        (with-current-buffer (palace-brief)
                          (goto-char (point-min))
                          (if (re-search-forward "\"card_id\": *\"\\(kc_[0-9a-z]+\\)\"" nil t) (match-string 1) :null)))
        (eglot-shutdown server)))
  (error (palace-e2e-fail (error-message-string err))))

(with-temp-file (getenv "PALACE_E2E_OUT")
  (insert (json-encode palace-e2e-result)))
(kill-emacs 0)
;;; e2e.el ends here
