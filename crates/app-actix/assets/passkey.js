// Passkeys: the one script of the passkey pages (served as
// /conta/chave-de-acesso.js under a Content-Security-Policy that allows
// this file and nothing inline).
//
// The page's form carries the ceremony's options (JSON from the server, in
// data-options) and says whether it registers a passkey or uses one
// (data-ceremony). On the button, the browser asks the authenticator; its
// answer goes back in the hidden field `credencial` and the form is posted.
// The server checks everything; this script only carries bytes.
(function () {
    'use strict';

    var form = document.getElementById('chave-form');
    var button = document.getElementById('chave-usar');
    var problem = document.getElementById('chave-erro');
    if (!form || !button) return;

    function say(text) {
        problem.textContent = text;
        problem.hidden = false;
        button.disabled = false;
    }

    if (!window.PublicKeyCredential || !navigator.credentials) {
        say('Este navegador não oferece chaves de acesso. Use outro navegador ou entre com a senha.');
        button.disabled = true;
        return;
    }

    // base64url text <-> bytes
    function bytes(text) {
        var b64 = text.replace(/-/g, '+').replace(/_/g, '/');
        while (b64.length % 4) b64 += '=';
        var raw = atob(b64);
        var out = new Uint8Array(raw.length);
        for (var i = 0; i < raw.length; i++) out[i] = raw.charCodeAt(i);
        return out.buffer;
    }
    function text(buffer) {
        var view = new Uint8Array(buffer);
        var raw = '';
        for (var i = 0; i < view.length; i++) raw += String.fromCharCode(view[i]);
        return btoa(raw).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
    }

    var registering = form.dataset.ceremony === 'registrar';
    var options = JSON.parse(form.dataset.options);
    var key = options.publicKey;
    key.challenge = bytes(key.challenge);
    if (key.user) key.user.id = bytes(key.user.id);
    (key.excludeCredentials || []).forEach(function (c) { c.id = bytes(c.id); });
    (key.allowCredentials || []).forEach(function (c) { c.id = bytes(c.id); });

    function answer(credential) {
        var r = credential.response;
        var out = {
            id: credential.id,
            rawId: text(credential.rawId),
            type: credential.type,
            extensions: credential.getClientExtensionResults ? credential.getClientExtensionResults() : {},
            response: { clientDataJSON: text(r.clientDataJSON) },
        };
        if (registering) {
            out.response.attestationObject = text(r.attestationObject);
            if (r.getTransports) out.response.transports = r.getTransports();
        } else {
            out.response.authenticatorData = text(r.authenticatorData);
            out.response.signature = text(r.signature);
            out.response.userHandle = r.userHandle ? text(r.userHandle) : null;
        }
        return JSON.stringify(out);
    }

    button.addEventListener('click', function () {
        button.disabled = true;
        problem.hidden = true;
        var asked = registering ? navigator.credentials.create({ publicKey: key }) : navigator.credentials.get({ publicKey: key });
        asked.then(function (credential) {
            if (!credential) return say('Nenhuma chave de acesso foi usada. Tente de novo.');
            document.getElementById('credencial').value = answer(credential);
            form.submit();
        }, function (e) {
            if (e && e.name === 'InvalidStateError') {
                return say('Esta chave de acesso já está cadastrada na sua conta.');
            }
            say('A operação com a chave de acesso foi cancelada ou não terminou a tempo. Tente de novo.');
        });
    });
})();
